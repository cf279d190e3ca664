/**
 * Store commands (activate, rollback, trust init, prune) stopped by a signal while
 * they wait for the store lock, through the built binary: they exit at once with
 * AIRLOCK_INTERRUPTED, say nothing was changed (one JSON document with --json), and leave the
 * store, the holder's lock included, byte for byte as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { airlock, startAirlock } from '../helpers/bin.js';
import { until } from '../helpers/wait.js';
import { acquireLock } from '../../src/store/lock.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, treeDigest, type TestKey } from '../store/helpers.js';

let dir: string;
let key: TestKey;
let store: string;

beforeAll(async () => {
  dir = await makeTempDir('airlock-interrupted-store-');
  key = await makeKey(dir);
  store = join(dir, 'store');
  for (const v of ['v1', 'v2']) {
    const pkg = await buildPackage(dir, { version: v, files: sampleSite(v), key });
    expect(airlock(['import', pkg, '--store', store, '--trust', key.pubPath, '--activate', '--no-precompress']).status).toBe(0);
  }
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a store command stopped while it waits for the store lock', () => {
  it.each([
    ['activate', () => ['activate', 'v1', '--store', store, '--json'], 'nothing was changed'],
    ['rollback', () => ['rollback', '--store', store, '--json'], 'nothing was changed'],
    ['trust init', () => ['trust', 'init', '--store', store, '--key', `a=${key.pubPath}`, '--threshold', '1', '--json'], 'nothing was changed'],
    ['prune', () => ['prune', '--keep', '0', '--store', store, '--json'], 'nothing was deleted'],
  ])('%s: SIGTERM → exit 1 at once, one JSON document saying nothing was changed, the store and its lock as they were', async (_name, args, said) => {
    const lock = await acquireLock(store, { timeoutMs: 5_000 }); // held by this test's process, alive all along
    try {
      const before = await treeDigest(store);
      const p = startAirlock(args());
      await until(() => p.stderr().includes('waiting for the store lock held by process'), { what: 'the wait message', timeoutMs: 20_000 });
      const sent = Date.now();
      p.kill('SIGTERM');
      const { code } = await p.exit(10_000);
      expect(Date.now() - sent).toBeLessThan(3_000);
      expect(code, p.stderr()).toBe(1);
      const doc = JSON.parse(p.stdout()) as { ok: boolean; code: string; error: string };
      expect(doc).toMatchObject({ ok: false, code: 'AIRLOCK_INTERRUPTED' });
      expect(doc.error).toContain(said);
      expect(p.stderr()).toContain('[AIRLOCK_INTERRUPTED]');
      expect(await treeDigest(store)).toBe(before);
    } finally {
      await lock.release();
    }
  });
});
