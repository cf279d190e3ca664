/**
 * `npm run bench:delta` (delta packages): two successive generated exports of a 3,000-page site, three
 * ways — (a) one page edited, (b) one page added so every page's navigation changes, (c) a new
 * release with 10 % of pages changed and every asset rehashed. For each: the delta's size as a
 * fraction of the full package (the service's tar.gz, as `fetch` writes it), and the import of
 * the delta beside a full import of the same version into a store holding the base (medians),
 * twice: warm (the base store and the package just written, in the page cache) and cold (the page
 * cache dropped first, as for a base imported days ago and a package on removable media; needs
 * root to write /proc/sys/vm/drop_caches, else the cold row says it was not measured). Each
 * import is the whole `airlock import` command of the built binary (npm run bench:delta builds it).
 *   npm run bench:delta -- [--pages 3000] [--runs 3] [--dir DIR]
 * Disk: nothing is deleted before the last import (bench/settle.ts), so each case keeps its
 * 4 × runs store copies until the end (about 3 GB per case at --runs 7, 9 GB in all).
 * Goals: (a) ≤ 1 %, (b) ≤ 5 %, (c) ≤ 25 %; delta import no slower than a full import.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateSite } from '../fixtures/generate.js';
import { packArchive } from '../src/package/index.js';
import { makeDelta } from '../src/delta/index.js';
import { importPackage } from '../src/store/index.js';
import { remove, settle } from './settle.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'dist/src/cli/bin.js'); // built by `npm run bench:delta` first
const { values } = parseArgs({ options: { pages: { type: 'string', default: '3000' }, runs: { type: 'string', default: '3' }, dir: { type: 'string' } } });
const runs = Number(values.runs);
const work = resolve(values.dir ?? join(ROOT, 'bench/out/delta'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const domain = 'docs.example.com';

async function walk(dir: string, base = dir): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p, base)));
    else out.push(p.slice(base.length + 1));
  }
  return out.sort();
}
async function edit(path: string, f: (s: string) => string): Promise<void> {
  await writeFile(path, f(await readFile(path, 'utf8')));
}
async function pack(site: string, version: string): Promise<string> {
  const archive = join(work, `${version}.tar.gz`);
  const r = spawnSync('tar', ['-czf', archive, '-C', site, '.'], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('tar failed');
  const s = await packArchive({ archivePath: archive, domain, version, outDir: work });
  await rm(archive);
  return s.package;
}

/** The three successors of the base site (each a copy of it, changed in place). */
const CHANGES: Record<string, (site: string, html: string[]) => Promise<void>> = {
  '(a) one page edited': async (site, html) => {
    await edit(join(site, html[html.length >> 1]!), (s) =>
      s.replace('</h1>', ' (revised)</h1>').replace(/<p>/, '<p>This paragraph was rewritten for the new release. '),
    );
  },
  '(b) one page added, every nav changes': async (site, html) => {
    await writeFile(join(site, 'whats-new.html'), (await readFile(join(site, html[1]!), 'utf8')).replace(/<h1>[^<]*<\/h1>/, '<h1>What is new</h1>'));
    for (const p of [...html, 'whats-new.html'])
      await edit(join(site, p), (s) =>
        s.replace('<li><a href="/">Home</a></li>', '<li><a href="/">Home</a></li><li><a href="/whats-new">What is new</a></li>'),
      );
  },
  '(c) 10 % pages changed, assets rehashed': async (site, html) => {
    const all = await walk(site);
    const renames: [string, string][] = [];
    for (const a of all.filter((p) => /^_next\/static\/.*\.(js|css)$/.test(p))) {
      const body = (await readFile(join(site, a), 'utf8')) + '\n/* release 2 */\n';
      const h = createHash('sha256').update(body).digest('hex');
      const to = a.replace(/([-/])[0-9a-f]{8,}\.(js|css)$/, (_m, sep: string, ext: string) => `${sep}${h.slice(0, sep === '-' ? 8 : 16)}.${ext}`);
      await writeFile(join(site, a), body);
      if (to !== a) {
        await rename(join(site, a), join(site, to));
        renames.push([a, to]);
      }
    }
    for (const [i, p] of html.entries()) {
      await edit(join(site, p), (s) => {
        for (const [from, to] of renames) s = s.split(from).join(to);
        return i % 10 === 3 ? s.replace(/<p>/, '<p>Updated for release 2: the options below changed their defaults. ') : s;
      });
    }
  },
};

/** Drop the page cache (after sync, so nothing dirty is lost): false when not permitted. */
async function dropCaches(): Promise<boolean> {
  spawnSync('sync');
  return writeFile('/proc/sys/vm/drop_caches', '3\n').then(
    () => true,
    () => false,
  );
}

/**
 * What the user waits for: the whole `airlock import` command (the built binary, a fresh process
 * each time, as a script runs it). In-process imports flattered the full import: the setup's
 * packing and delta-making had already warmed its archive code in the same process.
 * Each import gets its own copy of the base store, and nothing is deleted while imports are
 * timed (see bench/settle.ts).
 */
async function timeImport(pkg: string, base: string, store: string, cold: boolean): Promise<number> {
  await cp(base, store, { recursive: true });
  spawnSync('sync');
  if (cold && !(await dropCaches())) throw new Error('cannot drop the page cache');
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, 'import', pkg, '--store', store, '--allow-unsigned'], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`airlock import ${pkg} failed (${r.status}): ${r.stderr}`);
  return ms;
}

await remove(work);
await mkdir(work, { recursive: true });
const canDrop = await dropCaches();
const baseSite = join(work, 'site-v1');
process.stderr.write(`generating a ${values.pages}-page site...\n`);
const gen = await generateSite(baseSite, { pages: Number(values.pages), seed: 7, domain });
const html = (await walk(baseSite)).filter((p) => p.endsWith('.html') && p !== '404.html');
const v1 = await pack(baseSite, 'v1');
const baseStore = join(work, 'store-v1');
await importPackage(v1, { store: baseStore, trust: [], allowUnsigned: true });
process.stdout.write(`base: ${gen.files} files, ${(gen.bytes / 1048576).toFixed(1)} MB, package ${((await stat(v1)).size / 1048576).toFixed(2)} MB (tar.gz)\n`);
let n = 1;
for (const [name, change] of Object.entries(CHANGES)) {
  const version = `v${++n}`;
  const site = join(work, `site-${version}`);
  await cp(baseSite, site, { recursive: true });
  await change(site, html);
  const full = await pack(site, version);
  const t0 = performance.now();
  const d = await makeDelta({ oldPkg: v1, newPkg: full, outDir: join(work, `out-${version}`) });
  const makeMs = performance.now() - t0;
  const fullBytes = (await stat(full)).size;
  const times = { warm: { full: [] as number[], delta: [] as number[] }, cold: { full: [] as number[], delta: [] as number[] } };
  const stores = join(work, `stores-${version}`); // kept until the end (bench/settle.ts)
  await settle();
  let k = 0;
  for (let i = 0; i < runs; i++) {
    for (const mode of canDrop ? (['warm', 'cold'] as const) : (['warm'] as const)) {
      times[mode].full.push(await timeImport(full, baseStore, join(stores, `${++k}`), mode === 'cold'));
      times[mode].delta.push(await timeImport(d.delta, baseStore, join(stores, `${++k}`), mode === 'cold'));
    }
  }
  const row = (mode: 'warm' | 'cold') => {
    if (times[mode].full.length === 0) return `${mode}: not measured (dropping the page cache needs root)`;
    const f = median(times[mode].full);
    const dm = median(times[mode].delta);
    return `${mode}: delta ${(dm / 1000).toFixed(2)} s, full ${(f / 1000).toFixed(2)} s, ratio ${(dm / f).toFixed(2)}x`;
  };
  process.stdout.write(
    `${name}: delta ${(d.deltaBytes / 1024).toFixed(1)} KiB = ${((100 * d.deltaBytes) / fullBytes).toFixed(2)} % of the full package (${(fullBytes / 1048576).toFixed(2)} MB)` +
      ` [${d.ops.patch} patched, ${d.ops.whole} whole, ${d.ops.copy} copied, ${d.unchanged} unchanged, ${d.removed} removed; made in ${(makeMs / 1000).toFixed(1)} s];` +
      ` import ${row('warm')}; ${row('cold')} [medians of ${runs}]\n`,
  );
  await rm(join(work, `out-${version}`), { recursive: true, force: true });
  await rm(full);
}
await remove(work);
