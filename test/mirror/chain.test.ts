import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startEmulator, packageRoot, type RunningEmulator } from '../../src/emulator/index.js';
import { generateKeyPair } from '../../src/package/index.js';
import { run, start, tempDir, tokensFile, type Running } from './helpers.js';

/**
 * The mirror chain, end to end: service emulator → fetch (signed) → store A served by mirror A →
 * `airlock fetch --api-url mirrorA` → store B served by mirror B → `airlock fetch --api-url
 * mirrorB`: the last package is byte-identical to the first and its signature verifies.
 */
let emu: RunningEmulator;
let t: Awaited<ReturnType<typeof tempDir>>;
const servers: Running[] = [];

beforeAll(async () => {
  emu = await startEmulator({
    timings: { queuedMs: 20, runningMs: 60 },
    sites: { 'docs.example.com': { dir: join(packageRoot(), 'fixtures', 'site'), format: 'tar.gz' } },
  });
  t = await tempDir('airlock-chain-');
});
afterAll(async () => {
  for (const s of servers) await s.stop();
  await emu.close();
  await t.cleanup();
});

describe('two-hop mirror chain', () => {
  it('emulator → mirror A → mirror B: byte-identical package whose signature verifies at the end', async () => {
    const d = t.dir;
    const keys = await generateKeyPair(join(d, 'release'));
    const f0 = await run(
      ['fetch', '--domain', 'docs.example.com', '--api-url', emu.url, '--out', join(d, 'hop0'), '--sign-key', keys.keyPath, '--version-label', 'v1'],
      { AIRLOCK_ADMIN_KEY: emu.keys.admin },
    );
    expect(f0.code, f0.stderr).toBe(0);
    const pkg0 = f0.stdout.trim();

    let pkg = pkg0;
    for (const hop of ['A', 'B']) {
      const store = join(d, `store${hop}`);
      const imp = await run(['import', pkg, '--store', store, '--trust', keys.pubPath, '--activate']);
      expect(imp.code, imp.stderr).toBe(0);
      const token = `svc_mirror_${hop}_${'x'.repeat(20)}`;
      const tokens = await tokensFile(join(d, `tokens${hop}`), [token]);
      const mirror = await start(['serve', '--store', store, '--mirror', '--mirror-tokens', tokens, '--port', '0']);
      servers.push(mirror);
      const f = await run(
        ['fetch', '--domain', 'docs.example.com', '--api-url', mirror.url, '--out', join(d, `from${hop}`), '--trust', keys.pubPath, '--json'],
        { AIRLOCK_ADMIN_KEY: token },
      );
      expect(f.code, f.stderr).toBe(0);
      const summary = JSON.parse(f.stdout) as { package: string; form?: string; signed: boolean; version: string };
      expect(summary).toMatchObject({ form: 'package', signed: true, version: 'v1' });
      expect((await readFile(summary.package)).equals(await readFile(pkg0))).toBe(true);
      pkg = summary.package;
    }
    const v = await run(['verify', pkg, '--trust', keys.pubPath]);
    expect(v.code, v.stderr).toBe(0);
  }, 60_000);
});
