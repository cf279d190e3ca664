import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, packageRoot, type RunningEmulator, type StartOptions } from '../../src/emulator/index.js';
import { ServiceClient } from '../../src/upstream/index.js';

/** Shared set-up of the fetch tests: a fast emulator (short job lifecycle), a client, a temp folder. */
export interface Rig {
  emu: RunningEmulator;
  client: ServiceClient;
  dir: string;
  out: string;
  close(): Promise<void>;
}

export const SITE_DIR = join(packageRoot(), 'fixtures', 'site');

export async function rig(o: StartOptions = {}): Promise<Rig> {
  const emu = await startEmulator({
    timings: { queuedMs: 30, runningMs: 120 },
    sites: { 'docs.example.com': { dir: SITE_DIR, format: 'tar.gz' }, 'zip.example.com': { dir: SITE_DIR, format: 'zip' } },
    ...o,
  });
  const client = new ServiceClient({ baseUrl: emu.url, adminKey: emu.keys.admin, retry: { retries: 4, baseMs: 10, maxMs: 1500 } });
  const dir = await mkdtemp(join(tmpdir(), 'airlock-fetch-'));
  return {
    emu,
    client,
    dir,
    out: join(dir, 'out'),
    async close() {
      await emu.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Everything under a folder, relative, sorted (to prove nothing was written elsewhere). */
export async function tree(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

export const FAST = { pollIntervalMs: 40, downloadRetry: { retries: 4, baseMs: 10, maxMs: 200 } };
