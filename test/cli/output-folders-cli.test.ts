/**
 * Output folders and files a user names that are not what they look like, through the built
 * binary: a dangling symbolic link as --out (pack, delta, fetch) or as TMPDIR is named as one, with
 * its code, before any work or request (never a raw ENOENT, never "its folder does not exist"); an
 * access log inside the store is refused before serving (appending there would break the store),
 * and so is an emulator's key folder (secrets among the store's files).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { airlockAsync } from '../helpers/bin.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, treeDigest, type TestKey } from '../store/helpers.js';

let dir: string;
let key: TestKey;
let pkgs: { v1: string; v2: string };
let dangling: string;

beforeAll(async () => {
  dir = await makeTempDir('airlock-output-folders-');
  key = await makeKey(dir);
  pkgs = {
    v1: await buildPackage(dir, { version: 'v1', files: sampleSite('v1'), key, name: 'v1.airlock' }),
    v2: await buildPackage(dir, { version: 'v2', files: sampleSite('v2', 3), key, name: 'v2.airlock' }),
  };
  await mkdir(join(dir, 'site'));
  await writeFile(join(dir, 'site', 'index.html'), '<!doctype html><title>D</title><h1>1</h1>');
  execFileSync('tar', ['-czf', join(dir, 'export.tar.gz'), '-C', join(dir, 'site'), '.']);
  dangling = join(dir, 'dangling');
  await symlink('nowhere', dangling);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const DANGLING = /is a symbolic link to "nowhere", which does not exist/;

describe('a dangling symbolic link as the output folder', () => {
  it.each([
    ['pack', () => ['pack', join(dir, 'export.tar.gz'), '--domain', 'docs.example.com', '--version-label', 'v7']],
    ['delta', () => ['delta', pkgs.v1, pkgs.v2]],
  ])('%s --out LINK and --out LINK/sub: exit 2 AIRLOCK_OUT_PATH naming the link, nothing created', async (_cmd, args) => {
    for (const out of [dangling, join(dangling, 'sub')]) {
      const r = await airlockAsync([...args(), '--out', out, '--json']);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(DANGLING);
      expect(r.stderr).toContain('[AIRLOCK_OUT_PATH]');
      expect(r.stderr).not.toMatch(/ENOENT|ENOTDIR|its folder does not exist/);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: 'AIRLOCK_OUT_PATH', exitCode: 2 });
    }
    expect((await readdir(dir)).filter((f) => f === 'nowhere')).toEqual([]);
  });

  it('fetch --out LINK: refused before any request (the service address is closed), exit 2 naming the link', async () => {
    const r = await airlockAsync(['fetch', '--domain', 'docs.example.com', '--out', dangling], {
      env: { AIRLOCK_API_URL: 'http://127.0.0.1:9', AIRLOCK_ADMIN_KEY: 'svc_adm_0123456789abcdef0123456789abcdef' },
    });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(DANGLING);
    expect(r.stderr).toMatch(/\[AIRLOCK_OUT_(PATH|DIR)\]/);
    expect(r.stderr).not.toMatch(/ECONNREFUSED|connect|ENOENT/);
  });

  it('TMPDIR a dangling link: preview says so (exit 2 AIRLOCK_TMPDIR), never "its folder does not exist"', async () => {
    const r = await airlockAsync(['preview', pkgs.v1, '--port', '0'], { env: { TMPDIR: dangling } });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(DANGLING);
    expect(r.stderr).toContain('[AIRLOCK_TMPDIR]');
  });
});

describe('serve --access-log inside the store', () => {
  it.each(['state.json', 'access.log', 'versions/v1/version.json'])(
    '--access-log STORE/%s: exit 2 AIRLOCK_ACCESS_LOG before serving, the store unchanged',
    async (name) => {
      const store = join(dir, `store-${name.replace(/\W/g, '-')}`);
      const imp = await airlockAsync(['import', pkgs.v1, '--store', store, '--trust', key.pubPath, '--activate']);
      expect(imp.status, imp.stderr).toBe(0);
      const before = await treeDigest(store, { all: true });
      await mkdir(join(store, 'versions', 'v1'), { recursive: true });
      const r = await airlockAsync(['serve', '--store', store, '--port', '0', '--access-log', join(store, name)]);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/is inside the store .*\[AIRLOCK_ACCESS_LOG\]/);
      expect(r.stderr).not.toMatch(/serving \S+ at http/); // never listened
      expect(await treeDigest(store, { all: true })).toBe(before);
    },
  );
});

describe('emulate --keys-dir inside a store', () => {
  it.each(['.', 'versions', 'versions/v1/site'])(
    '--keys-dir STORE/%s: exit 2 before listening, no key file written there, the store unchanged',
    async (sub) => {
      const store = join(dir, `store-keys-${sub.replace(/\W/g, '-')}`);
      const imp = await airlockAsync(['import', pkgs.v1, '--store', store, '--trust', key.pubPath, '--activate']);
      expect(imp.status, imp.stderr).toBe(0);
      const before = await treeDigest(store, { all: true });
      const r = await airlockAsync(['emulate', '--port', '0', '--keys-dir', join(store, sub)]);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/--keys-dir must name a folder outside it .*\[AIRLOCK_OUT_PATH\]/);
      expect(r.stdout).not.toMatch(/http:/); // never listened
      expect(await treeDigest(store, { all: true })).toBe(before);
    },
  );
});

describe('--split with a volume name already taken', () => {
  it('pack --split: exit 2 AIRLOCK_EXISTS naming the volume, before any package is written', async () => {
    const out = join(dir, 'split-taken');
    await mkdir(out);
    await writeFile(join(out, 'docs.example.com-v7.airlock.002'), 'mine');
    const r = await airlockAsync([
      'pack',
      join(dir, 'export.tar.gz'),
      '--domain',
      'docs.example.com',
      '--version-label',
      'v7',
      '--out',
      out,
      '--split',
      '4096',
    ]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/docs\.example\.com-v7\.airlock\.002 .*\[AIRLOCK_EXISTS\]/);
    expect(r.stderr).not.toContain('the package itself is kept'); // refused before the package was written
    expect(await readdir(out)).toEqual(['docs.example.com-v7.airlock.002']);
  });

  it('delta --split: exit 2 AIRLOCK_EXISTS naming the volume, no delta and no full package written', async () => {
    const out = join(dir, 'split-taken-delta');
    await mkdir(out);
    const taken = 'docs.example.com-v2.delta.airlock.001';
    await writeFile(join(out, taken), 'mine');
    const r = await airlockAsync(['delta', pkgs.v1, pkgs.v2, '--out', out, '--split', '4096']);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('[AIRLOCK_EXISTS]');
    expect(await readdir(out)).toEqual([taken]);
  });
});
