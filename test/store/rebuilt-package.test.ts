import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cp, mkdtemp, readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDelta } from '../../src/delta/index.js';
import { importPackage, storedPackage } from '../../src/store/index.js';
import { FIXTURE_SITE, makePackage } from '../helpers/make-package.js';

/**
 * The package of a version imported from a delta, built on first use from the store's own files
 * (src/store/rebuilt-package.ts): those files may have been copied or edited by hand, so each is
 * bounded before it is read and a damaged one is refused, naming it, with no package left behind.
 */
let dir: string;
let pristine: string;
let full: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-rebuilt-'));
  const sites = ['s1', 's2'].map((s) => join(dir, s));
  for (const s of sites) await cp(FIXTURE_SITE, s, { recursive: true });
  await writeFile(join(sites[1]!, 'index.html'), (await readFile(join(sites[1]!, 'index.html'), 'utf8')).replace('</body>', '<p>next</p></body>'));
  const [v1, v2] = await Promise.all(['v1', 'v2'].map((v, i) => makePackage({ siteDir: sites[i]!, version: v, outDir: join(dir, `p-${v}`) })));
  const d = await makeDelta({ oldPkg: v1!.pkgPath, newPkg: v2!.pkgPath, outDir: join(dir, 'out') });
  full = await readFile(d.full);
  pristine = join(dir, 'pristine');
  await importPackage(v1!.pkgPath, { store: pristine, trust: [], allowUnsigned: true });
  await importPackage(d.delta, { store: pristine, trust: [], allowUnsigned: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function copyStore(): Promise<{ store: string; v2: string }> {
  const store = join(dir, `store-${++n}`);
  await cp(pristine, store, { recursive: true });
  return { store, v2: join(store, 'versions', 'v2') };
}
const leftovers = async (v2: string) => (await readdir(v2)).filter((f) => f === 'package.airlock' || f.endsWith('.tmp'));

describe('the package of a delta-imported version, built on first use', () => {
  it('is the full package airlock delta wrote, byte for byte', async () => {
    const { store } = await copyStore();
    expect((await readFile((await storedPackage(store, 'v2')).path)).equals(full)).toBe(true);
  });

  it('a signature file that is huge (sparse, 1 GiB) or short: refused naming it, read no further, nothing left', async () => {
    for (const size of [1024 ** 3, 10]) {
      const { store, v2 } = await copyStore();
      const sig = join(v2, 'airlock.json.sig');
      if (!existsSync(sig)) await writeFile(sig, '');
      await truncate(sig, size);
      await expect(storedPackage(store, 'v2')).rejects.toMatchObject({ code: 'AIRLOCK_BAD_VERSION', details: { subject: sig } });
      expect(await leftovers(v2)).toEqual([]);
    }
  });

  it('a stored manifest beyond the bound (sparse, 200 MB) is refused before it is read; a damaged one too', async () => {
    const { store, v2 } = await copyStore();
    await truncate(join(v2, 'airlock.json'), 200 * 1024 * 1024);
    await expect(storedPackage(store, 'v2')).rejects.toMatchObject({ code: 'AIRLOCK_BAD_VERSION' });
    const b = await copyStore();
    const m = join(b.v2, 'airlock.json');
    await writeFile(m, (await readFile(m)).subarray(0, 100));
    await expect(storedPackage(b.store, 'v2')).rejects.toThrow();
    expect([...(await leftovers(v2)), ...(await leftovers(b.v2))]).toEqual([]);
  });

  it('a manifest edited to another archive digest: the package is built, checked, refused (AIRLOCK_ARCHIVE_DIGEST), not kept', async () => {
    const { store, v2 } = await copyStore();
    const m = join(v2, 'airlock.json');
    const text = await readFile(m, 'utf8');
    const sha = (JSON.parse(text) as { archive: { sha256: string } }).archive.sha256;
    await writeFile(
      m,
      text.replace(
        sha,
        sha.replace(/^./, (c) => (c === '0' ? '1' : '0')),
      ),
    );
    await expect(storedPackage(store, 'v2')).rejects.toMatchObject({ code: 'AIRLOCK_ARCHIVE_DIGEST' });
    expect(await leftovers(v2)).toEqual([]);
  });
});
