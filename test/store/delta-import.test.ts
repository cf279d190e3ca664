import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSite } from '../../fixtures/generate.js';
import { makeDelta } from '../../src/delta/index.js';
import { importPackage } from '../../src/store/index.js';
import { siteFolders } from '../../src/store/paths.js';
import { makePackage } from '../helpers/make-package.js';

/**
 * A delta import fsyncs every folder of the rebuilt site before the commit's rename (a folder's
 * names are data too). The folders are computed from the target manifest, not walked, so the
 * computed list must be exactly what the rebuild made on disk.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-delta-import-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function walkFolders(root: string): Promise<string[]> {
  const out = [root];
  for (const e of await readdir(root, { withFileTypes: true })) if (e.isDirectory()) out.push(...(await walkFolders(join(root, e.name))));
  return out;
}

describe('siteFolders', () => {
  it('lists the root, then every ancestor folder of every file once', () => {
    const got = siteFolders('/s', [{ path: 'x.html' }, { path: 'a/b/c.html' }, { path: 'a/d.html' }, { path: 'e/f/g/h.js' }, { path: 'a/b/i.html' }]);
    expect(got[0]).toBe('/s');
    expect([...got].sort()).toEqual(['/s', '/s/a', '/s/a/b', '/s/e', '/s/e/f', '/s/e/f/g']);
  });

  it('is exactly the folders a delta import made, for a site with nested and page-named folders', async () => {
    const s1 = join(dir, 's1');
    const s2 = join(dir, 's2');
    await generateSite(s1, { pages: 60, seed: 3, domain: 'docs.example.com', traits: { pageNamedFolders: true, redirectStubs: 4 } });
    await cp(s1, s2, { recursive: true });
    await writeFile(join(s2, 'index.html'), (await readFile(join(s2, 'index.html'), 'utf8')).replace('</body>', '<p>next</p></body>'));
    await mkdir(join(s2, 'whats-new', 'deep'), { recursive: true }); // folders only the target has
    await writeFile(join(s2, 'whats-new', 'deep', 'index.html'), '<p>new</p>');
    const [v1, v2] = await Promise.all([s1, s2].map((s, i) => makePackage({ siteDir: s, version: `v${i + 1}`, outDir: join(dir, `p${i}`) })));
    const d = await makeDelta({ oldPkg: v1!.pkgPath, newPkg: v2!.pkgPath, outDir: join(dir, 'out') });
    const store = join(dir, 'store');
    await importPackage(v1!.pkgPath, { store, trust: [], allowUnsigned: true });
    await importPackage(d.delta, { store, trust: [], allowUnsigned: true });
    const site = join(store, 'versions', 'v2', 'site');
    const manifest = JSON.parse(await readFile(join(store, 'versions', 'v2', 'airlock.json'), 'utf8')) as { files: { path: string }[] };
    const walked = await walkFolders(site);
    expect(walked.length).toBeGreaterThan(5);
    expect([...siteFolders(site, manifest.files)].sort()).toEqual(walked.sort());
  });
});
