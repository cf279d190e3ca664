import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { buildPackage, makeKey, makeTempDir, sampleSite, treeDigest, type TestKey } from '../store/helpers.js';
import { airlock, airlockAsync } from '../helpers/bin.js';

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => airlock(args, { env });
const runAsync = (args: string[]) => airlockAsync(args);

let dir: string;
let key: TestKey;
let stranger: TestKey;
const pkgs: Record<string, string> = {};
beforeAll(async () => {
  dir = await makeTempDir('airlock-store-cli-');
  key = await makeKey(dir, 'signer');
  stranger = await makeKey(dir, 'stranger');
  for (const v of ['v1', 'v2', 'v3']) pkgs[v] = await buildPackage(dir, { version: v, files: sampleSite(v, 2), key });
  await mkdir(join(dir, 'other'));
  pkgs.v1other = await buildPackage(join(dir, 'other'), { version: 'v1', files: sampleSite('other'), key });
  await mkdir(join(dir, 'unsigned'));
  pkgs.unsigned = await buildPackage(join(dir, 'unsigned'), { version: 'u1', files: sampleSite('u') });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('airlock import/list/activate/rollback/prune', () => {
  it('walks the whole cycle with --json results and exit codes', async () => {
    const store = join(dir, 'store-cycle');
    const imp = run(['import', pkgs.v1!, '--store', store, '--trust', key.pubPath, '--activate', '--precompress', '--json']);
    expect(imp.status).toBe(0);
    expect(JSON.parse(imp.stdout)).toMatchObject({
      ok: true,
      version: 'v1',
      status: 'imported',
      activated: true,
      variants: { candidates: expect.any(Number) },
    });
    expect(imp.stderr).toMatch(/verifying .*v1\.airlock/); // plain progress lines on a non-TTY stderr
    expect(imp.stderr).toContain('precompressing');
    // AIRLOCK_STORE is the default store.
    expect(run(['import', pkgs.v2!, '--trust', key.pubPath, '--no-precompress'], { AIRLOCK_STORE: store }).status).toBe(0);
    expect(run(['import', pkgs.v3!, '--store', store, '--trust', key.pubPath]).status).toBe(0);
    expect(run(['activate', 'v2', '--store', store]).stdout).toContain('active: v2');
    const list = JSON.parse(run(['list', '--store', store, '--json']).stdout);
    expect(list).toMatchObject({ active: 'v2', previous: 'v1' });
    expect(list.versions.map((v: { version: string }) => v.version)).toEqual(['v3', 'v2', 'v1']);
    // v1 was precompressed by its import; the others wait for a server (airlock serve) to do it.
    expect(list.versions.map((v: { precompressed: boolean }) => v.precompressed)).toEqual([false, false, true]);
    expect(run(['import', pkgs.v3!, '--store', store, '--trust', key.pubPath, '--precompress', '--no-precompress']).status).toBe(2);
    const prose = run(['list', '--store', store]).stdout;
    expect(prose).toMatch(/^\*\s+v2\s/m);
    expect(prose).toMatch(/^-\s+v1\s.*\sbr,gzip\s/m);
    expect(prose).toMatch(/^\*\s+v2\s.*\spending\s/m);
    expect(run(['rollback', '--store', store, '--json']).stdout).toContain('"active": "v1"');
    const pruned = run(['prune', '--keep', '0', '--store', store, '--json']);
    expect(JSON.parse(pruned.stdout).deleted).toEqual(['v3']);
  });

  it('re-import is a no-op; a different package under the same label exits 1 AIRLOCK_VERSION_CONFLICT, store unchanged', async () => {
    const store = join(dir, 'store-conflict');
    expect(run(['import', pkgs.v1!, '--store', store, '--trust', key.pubPath]).status).toBe(0);
    const again = run(['import', pkgs.v1!, '--store', store, '--trust', key.pubPath]);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('unchanged');
    const before = await treeDigest(store);
    const conflict = run(['import', pkgs.v1other!, '--store', store, '--trust', key.pubPath]);
    expect(conflict.status).toBe(1);
    expect(conflict.stderr).toContain('AIRLOCK_VERSION_CONFLICT');
    expect(await treeDigest(store)).toBe(before);
  });

  it('unsigned without --allow-unsigned and an untrusted signer exit 4, store unchanged', async () => {
    const store = join(dir, 'store-trust');
    expect(run(['import', pkgs.v1!, '--store', store, '--trust', key.pubPath]).status).toBe(0);
    const before = await treeDigest(store);
    expect(run(['import', pkgs.unsigned!, '--store', store]).status).toBe(4);
    expect(run(['import', pkgs.v2!, '--store', store, '--trust', stranger.pubPath]).status).toBe(4);
    expect(await treeDigest(store)).toBe(before);
    expect(run(['import', pkgs.unsigned!, '--store', store, '--allow-unsigned', '--no-precompress']).status).toBe(0);
  });

  it('two imports from two processes at once both succeed (the lock serialises them)', async () => {
    const store = join(dir, 'store-concurrent');
    // Trust policy: whichever takes the lock second may be older than the first (v1 after v2: a
    // downgrade, refused without --allow-downgrade); the override keeps this test about the lock.
    const [a, b] = await Promise.all([
      runAsync(['import', pkgs.v1!, '--store', store, '--trust', key.pubPath, '--no-precompress', '--allow-downgrade']),
      runAsync(['import', pkgs.v2!, '--store', store, '--trust', key.pubPath, '--no-precompress', '--allow-downgrade']),
    ]);
    expect([a.status, b.status]).toEqual([0, 0]);
    const list = JSON.parse(run(['list', '--store', store, '--json']).stdout);
    expect(list.versions.map((v: { version: string }) => v.version).sort()).toEqual(['v1', 'v2']);
    expect(JSON.parse(run(['audit', 'verify', '--store', store, '--json']).stdout)).toMatchObject({ ok: true, lines: 2 });
  });

  it('usage and lookup errors: unknown version exits 1, missing --keep and bad labels exit 2', async () => {
    const store = join(dir, 'store-errors');
    await mkdir(store); // an empty folder is an empty store
    const unknown = run(['activate', 'v9', '--store', store]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('AIRLOCK_VERSION_NOT_FOUND');
    expect(run(['prune', '--store', store]).status).toBe(2);
    expect(run(['activate', '../etc', '--store', store]).status).toBe(2);
    expect(run(['rollback', '--store', store]).stderr).toContain('AIRLOCK_NO_PREVIOUS');
    expect(run(['list', '--store', store]).stdout).toContain('no versions');
  });
});
