import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create as tarCreate } from 'tar';
import { generateSite } from '../../fixtures/generate.js';
import { caseCodes } from '../../fixtures/site-traits.js';
import { airlockAsync } from '../helpers/bin.js';
import { makeArchive, makePackage, walkSite } from '../helpers/make-package.js';
import { crawl, get, linksOf, reach, startBin, type RunningBin } from '../helpers/served.js';

/**
 * Through the built binary: exports with the traits of real documentation sites
 * (fixtures/site-traits.ts) import, verify, preview and serve, with the documented URL forms and
 * single 308s, no loops, and every page reachable.
 *  - "traits": 970 case pairs, 2,000 redirect stubs, folders named like pages, two 4 MB pages,
 *    third-party resources (tar.gz; preview: the same traits at a tenth of the counts);
 *  - "sub-path": a site built for /docs (zip; and as a tar with its files under docs/).
 */
let root: string;
let store: string;
let traitsDir: string;
let smallDir: string;
let subDir: string;
let traitsPkg: string;
let subPkg: string;
const CASE_PAIRS = 970;
const STUBS = 2000;
const BIG = 4 * 1024 * 1024;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'airlock-real-exports-'));
  store = join(root, 'store');
  traitsDir = join(root, 'traits');
  subDir = join(root, 'sub');
  await generateSite(traitsDir, {
    pages: 60,
    seed: 12,
    bytesPerPage: 6000,
    traits: { redirectStubs: STUBS, pageNamedFolders: true, casePairs: CASE_PAIRS, largePages: { count: 2, bytes: BIG }, thirdParty: true },
  });
  smallDir = join(root, 'traits-small');
  await generateSite(smallDir, {
    pages: 30,
    seed: 14,
    bytesPerPage: 5000,
    traits: { redirectStubs: 200, pageNamedFolders: true, casePairs: 100, largePages: { count: 2, bytes: BIG }, thirdParty: true },
  });
  await generateSite(subDir, {
    pages: 40,
    seed: 13,
    bytesPerPage: 5000,
    traits: { basePath: '/docs', redirectStubs: 80, pageNamedFolders: true, casePairs: 5 },
  });
  traitsPkg = (await makePackage({ siteDir: traitsDir, outDir: join(root, 'pkg-traits'), version: 'traits', format: 'tar.gz' })).pkgPath;
  subPkg = (await makePackage({ siteDir: subDir, outDir: join(root, 'pkg-sub'), version: 'sub', format: 'zip' })).pkgPath;
}, 120_000);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Shape {
  dir: string;
  pairs: number;
  stubs: number;
  pages: number;
}
const BIG_SITE = (): Shape => ({ dir: traitsDir, pairs: CASE_PAIRS, stubs: STUBS, pages: 60 });
const SMALL_SITE = (): Shape => ({ dir: smallDir, pairs: 100, stubs: 200, pages: 30 });

async function checkTraits(origin: string, shape: Shape): Promise<void> {
  const { dir, pairs } = shape;
  // case pairs: two pages, both URL forms, one 308 each, query string kept
  const [upper, lower] = [await get(`${origin}/rules/A001/`), await get(`${origin}/rules/a001/`)];
  expect([upper.status, lower.status]).toEqual([200, 200]);
  expect(upper.body.toString()).toContain('<h1>Rule A001</h1>');
  expect(lower.body.toString()).toContain('<h1>Rule a001 (legacy lower-case page)</h1>');
  const last = caseCodes(pairs).at(-1)!; // the last pair (H038 of 970)
  expect((await get(`${origin}/rules/${last}?x=1`)).location).toBe(`/rules/${last}/?x=1`);
  expect((await get(`${origin}/rules/${last.toLowerCase()}.html`)).location).toBe(`/rules/${last.toLowerCase()}/`);
  expect((await get(`${origin}/RULES/A001/`)).status).toBe(404);
  for (const code of caseCodes(pairs).filter((_, i) => i % 97 === 0)) {
    for (const c of [code, code.toLowerCase()]) expect((await reach(origin, `/rules/${c}`)).final.status, c).toBe(200);
  }
  // a folder named like a page keeps its URL; the stub in it points at the folder page
  const stub = await reach(origin, '/getting-started.html');
  expect(stub.hops).toEqual(['/getting-started.html/']);
  expect(linksOf(stub.final.body.toString()).refresh).toBe('/getting-started');
  expect((await reach(origin, '/getting-started')).hops).toEqual(['/getting-started/']);
  // redirect stubs (every 4th): one 308 at most, and the target is a real page (no loop through stubs)
  const stubs = (await walkSite(dir)).filter((f) => f.startsWith('archive/'));
  expect(stubs).toHaveLength(shape.stubs);
  for (const f of stubs.filter((_, i) => i % 4 === 0)) {
    const r = await reach(origin, '/' + f.slice(0, -'index.html'.length).replace(/\/$/, ''));
    expect(r.final.status, f).toBe(200);
    const target = linksOf(r.final.body.toString()).refresh!;
    const t = await reach(origin, target);
    expect(t.final.status, `${f} -> ${target}`).toBe(200);
    expect(linksOf(t.final.body.toString()).refresh, `${f} -> ${target}`).toBeNull();
  }
  // pages of several MB are served whole, and by range
  const bigFiles: string[] = [];
  for (const f of (await walkSite(dir)).filter((x) => x.endsWith('.html'))) if ((await readFile(join(dir, f))).length > BIG - 100_000) bigFiles.push(f);
  expect(bigFiles).toHaveLength(2);
  for (const f of bigFiles) {
    const page = await get(`${origin}/${f.replace(/\.html$/, '')}`);
    expect(page.status).toBe(200);
    expect(page.body.length).toBeGreaterThan(BIG - 100_000);
    expect(page.body.toString().trimEnd().endsWith('</html>')).toBe(true);
    expect((await get(`${origin}/${f}`, { range: 'bytes=0-99' })).status).toBe(206);
  }
  const site = await crawl(origin, '/', 600);
  expect(site.problems).toEqual([]);
  expect(site.pages).toBeGreaterThanOrEqual(shape.pages);
  const rules = await crawl(origin, '/rules/', 2 * pairs + 100);
  expect(rules.problems).toEqual([]);
  expect(rules.pages).toBeGreaterThan(2 * pairs);
}

async function checkSubPath(origin: string): Promise<void> {
  expect((await get(`${origin}/docs`)).location).toBe('/docs/');
  const home = await get(`${origin}/docs/`);
  expect(home.status).toBe(200);
  expect(home.body.toString()).toContain('href="/docs/getting-started"');
  const site = await crawl(origin, '/docs/', 400);
  expect(site.problems).toEqual([]);
  expect(site.pages).toBeGreaterThanOrEqual(40);
  expect((await reach(origin, '/docs/rules/a001')).final.status).toBe(200);
  expect((await reach(origin, '/docs/archive/v1/getting-started.html')).final.status).toBe(200);
}

describe('real-export traits through the binary', () => {
  it('verify accepts both packages (case pairs included: verify extracts nothing)', async () => {
    for (const pkg of [traitsPkg, subPkg]) {
      const r = await airlockAsync(['verify', pkg, '--allow-unsigned'], { timeoutMs: 120_000 });
      expect(r.status, r.stderr).toBe(0);
    }
  }, 240_000);

  it('import into a store on a case-sensitive disk, then serve: every trait answers as the contract says', async () => {
    // The big one without precompression (its cost is per file, not per trait, and serve transforms the HTML itself).
    for (const args of [[traitsPkg, '--no-precompress'], [subPkg]]) {
      const r = await airlockAsync(['import', ...args, '--store', store, '--allow-unsigned'], { timeoutMs: 240_000 });
      expect(r.status, r.stderr).toBe(0);
    }
    expect((await readdir(join(store, 'versions', 'traits', 'site', 'rules'))).filter((n) => /^a001$/i.test(n)).sort()).toEqual(['A001', 'a001']);
    let srv: RunningBin | undefined;
    try {
      srv = await startBin(['serve', '--store', store, '--version', 'traits', '--port', '0']);
      await checkTraits(srv.origin, BIG_SITE());
      expect(await srv.stop()).toBe(0);
      srv = await startBin(['serve', '--store', store, '--version', 'sub', '--port', '0']);
      await checkSubPath(srv.origin);
      expect(srv.stderr()).toContain('built for the sub-path /docs/');
    } finally {
      await srv?.stop();
    }
  }, 480_000);

  it('preview of the export archives (a smaller traits site): the same answers, and the temp folder is gone after exit', async () => {
    const tmp = join(root, 'tmp-preview');
    await mkdir(tmp);
    const traitsArchive = join(root, 'traits.tar.gz');
    await makeArchive(smallDir, 'tar.gz', traitsArchive);
    // the sub-path site packed with its files under docs/ (the tree as served): the wrapping folder
    // is stripped and the links still work through the detected base path
    const subArchive = join(root, 'sub-under-docs.tar');
    await tarCreate({ file: subArchive, cwd: subDir, portable: true, prefix: 'docs' }, await walkSite(subDir));
    for (const [archive, check] of [
      [traitsArchive, (o: string) => checkTraits(o, SMALL_SITE())],
      [subArchive, checkSubPath],
    ] as const) {
      const p = await startBin(['preview', archive, '--port', '0'], { TMPDIR: tmp });
      try {
        await check(p.origin);
      } finally {
        expect(await p.stop()).toBe(0);
      }
      expect(await readdir(tmp)).toEqual([]);
    }
  }, 480_000);
});
