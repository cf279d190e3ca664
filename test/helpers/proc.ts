/**
 * Around a long-running `airlock` command (started by `startAirlock` of test/helpers/bin.ts, re-exported
 * here): a private TMPDIR, so "nothing left behind" is checked without other tests' noise, and a
 * port held by someone else.
 */
import { createServer } from 'node:net';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
export { startAirlock, type Proc } from './bin.js';

/** A private TMPDIR for one child, and what it holds afterwards (must be nothing). */
export async function privateTmp(): Promise<{ dir: string; litter(): Promise<string[]>; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-tmpdir-'));
  return {
    dir,
    litter: async () => (await readdir(dir, { recursive: true })).map(String).sort(),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A port on 127.0.0.1 held by someone else (for listen errors); `release` lets it go. */
export async function occupiedPort(): Promise<{ port: number; release(): Promise<void> }> {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  return { port: (blocker.address() as { port: number }).port, release: () => new Promise<void>((r) => blocker.close(() => r())) };
}
