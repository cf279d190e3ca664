/**
 * The judged part of `npm run bench:search`: does the search find the page a reader means, on
 * REAL documentation sites, beside Pagefind (the well-known static-site search engine) over the
 * same HTML, the same queries, in the same run.
 *
 * The sites are real exports built by real generators, shipped as Debian packages, fetched at
 * benchmark time with `apt-get download` (exact versions pinned below: the judgments name paths,
 * so a different version fails loudly instead of scoring low), extracted with `dpkg-deb -x` and
 * cached under bench/out/real/ (git-ignored; no page is committed):
 * - python: the Python 3.11 documentation (Sphinx), python3.11-doc. VERSIONED trait, built from
 *   the real pages: the same tree is placed unversioned (the site's default, as a Docusaurus or
 *   MkDocs-mike export serves its current version at the root), under /latest/ and under /dev/.
 *   The copies are identical pages, the hardest case for telling versions apart. A judgment
 *   `library/x.html` is met by `/library/x.html` or `/latest/library/x.html` (both are the
 *   default version's copy), never by the /dev/ copy.
 * - postgresql: the PostgreSQL 15 manual (DocBook), postgresql-doc-15, as installed.
 * - nodejs: the Node.js 18 API docs (Node's own generator), nodejs-doc, its api/ folder.
 * - debian-reference: the Debian Reference (DocBook) in English, Japanese and Simplified Chinese,
 *   debian-reference-{en,ja,zh-cn}, MULTILINGUAL trait: as installed, all three in one folder
 *   (`ch02.en.html`, `ch02.ja.html`, `ch02.zh-cn.html`, the content-negotiation naming Apache
 *   serves), plus `index.html` = `index.en.html` (what that negotiation serves at the root when
 *   the reader's browser states no language: English is first in its LanguagePriority). The pages
 *   carry no `lang` attribute.
 *
 * Judgments (bench/search/judgments.json): query → the page meant (optionally a second acceptable
 * one), written before any ranking change. No reader context is given to either engine (no
 * current page, no language filter): the reader's language is what the query's script says.
 * Pagefind (npm `pagefind`, its CLI binary an optional dependency) indexes the same site folder;
 * its own pagefind.js runs in Node with a fetch shim that reads its files from disk, and is
 * given the reader's language the same way (Japanese for kana, Chinese for Han-only queries).
 * Scores: top-1, top-3 (the meant page is the first / among the first three results), MRR over the
 * first 10; latency per query: airlock's search + snippets for 10 hits (server side), Pagefind's
 * search + the data of its first 10 hits (in the reader's browser; includes loading its index
 * chunks from disk the first time they are needed).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { extractPage } from '../src/search/extract.js';
import { SearchIndex, type QueryOptions } from '../src/search/engine.js';
import { readBounded, searchablePages } from '../src/search/build.js';
import { PageTexts } from '../src/search/page-texts.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'bench/out/real');

/** The pinned packages (Debian 12 "bookworm" and its security updates). */
const PACKAGES: Record<string, string> = {
  'python3.11-doc': '3.11.2-6+deb12u9',
  'postgresql-doc-15': '15.20-0+deb12u1',
  'nodejs-doc': '18.20.4+dfsg-1~deb12u3',
  'debian-reference-en': '2.100',
  'debian-reference-ja': '2.100',
  'debian-reference-zh-cn': '2.100',
};

interface Judgment {
  site: string;
  q: string;
  want: string;
  alt?: string;
}

async function fetchPackages(): Promise<Record<string, string>> {
  const debs = join(OUT, 'debs');
  await mkdir(debs, { recursive: true });
  const got: Record<string, string> = {};
  for (const [pkg, version] of Object.entries(PACKAGES)) {
    const x = join(OUT, 'x', pkg);
    if (!existsSync(join(x, '.done'))) {
      let file = (await readdir(debs)).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
      if (!file) {
        try {
          execFileSync('apt-get', ['download', `${pkg}=${version}`], { cwd: debs, stdio: ['ignore', 'ignore', 'inherit'] });
        } catch {
          throw new Error(
            `bench:search: apt-get could not download ${pkg}=${version}; the package lists may be older than it: run apt-get update and try again`,
          );
        }
        file = (await readdir(debs)).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
      }
      if (!file) throw new Error(`bench:search: apt-get download ${pkg}=${version} gave no .deb`);
      const v = execFileSync('dpkg-deb', ['-f', join(debs, file), 'Version'], { encoding: 'utf8' }).trim();
      if (v !== version)
        throw new Error(`bench:search: ${pkg} is ${v}, the judgments are for ${version}; delete bench/out/real and pin the version that is there`);
      await rm(x, { recursive: true, force: true });
      await mkdir(x, { recursive: true });
      execFileSync('dpkg-deb', ['-x', join(debs, file), x]);
      await writeFile(join(x, '.done'), v);
    }
    got[pkg] = (await readFile(join(x, '.done'), 'utf8')).trim();
  }
  return got;
}

/** Copy only the HTML pages (what both engines index) of `from` into `to`. */
async function copyHtml(from: string, to: string): Promise<void> {
  await cp(from, to, { recursive: true, dereference: false, filter: (src) => !/\.(gz|js|css|png|svg|txt|json|inv|woff2?|ico|gif|jpg)$/i.test(src) });
}

async function assembleSites(): Promise<string[]> {
  const sites = join(OUT, 'sites');
  if (existsSync(join(sites, '.done'))) return JSON.parse(await readFile(join(sites, '.done'), 'utf8')) as string[];
  await rm(sites, { recursive: true, force: true });
  const py = join(OUT, 'x/python3.11-doc/usr/share/doc/python3.11/html');
  for (const at of ['', 'latest', 'dev']) await copyHtml(py, join(sites, 'python', at));
  await copyHtml(join(OUT, 'x/postgresql-doc-15/usr/share/doc/postgresql-doc-15/html'), join(sites, 'postgresql'));
  await copyHtml(join(OUT, 'x/nodejs-doc/usr/share/doc/nodejs/api'), join(sites, 'nodejs', 'api'));
  for (const l of ['en', 'ja', 'zh-cn']) await copyHtml(join(OUT, `x/debian-reference-${l}/usr/share/debian-reference`), join(sites, 'debian-reference'));
  await cp(join(sites, 'debian-reference/index.en.html'), join(sites, 'debian-reference/index.html'));
  const names = ['python', 'postgresql', 'nodejs', 'debian-reference'];
  await writeFile(join(sites, '.done'), JSON.stringify(names));
  return names;
}

async function htmlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith('.html')) out.push(relative(dir, join(e.parentPath, e.name)).split('\\').join('/'));
  }
  return searchablePages(out.sort().map((path) => ({ path }))).map((f) => f.path);
}

/** `/a/b.html`, `a/b`, `/a/b/` and `/a/b/index.html` all name `a/b`. */
const norm = (p: string) =>
  decodeURIComponent(p.split('#')[0]!)
    .replace(/^\/+/, '')
    .replace(/(^|\/)index\.html$/, '$1')
    .replace(/\.html$/, '')
    .replace(/\/$/, '');

function meets(site: string, j: Judgment, url: string): boolean {
  const u = norm(url);
  return [j.want, j.alt].some((w) => w !== undefined && (u === norm(w) || (site === 'python' && u === 'latest/' + norm(w))));
}

/** The reader's language as the query's script says (what both engines are told). */
function readerLanguage(q: string): string | undefined {
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(q)) return 'ja';
  if (/\p{Script=Han}/u.test(q)) return 'zh-cn';
  return undefined;
}

interface Score {
  n: number;
  top1: number;
  top3: number;
  top5: number;
  rr: number;
  ms: number[];
  misses: string[];
}
const blank = (): Score => ({ n: 0, top1: 0, top3: 0, top5: 0, rr: 0, ms: [], misses: [] });
function record(s: Score, site: string, j: Judgment, urls: string[], ms: number): void {
  const rank = urls.slice(0, 10).findIndex((u) => meets(site, j, u));
  s.n++;
  s.ms.push(ms);
  if (rank === 0) s.top1++;
  if (rank >= 0 && rank < 3) s.top3++;
  if (rank >= 0 && rank < 5) s.top5++;
  if (rank >= 0) s.rr += 1 / (rank + 1);
  if (rank !== 0)
    s.misses.push(`${site}: ${JSON.stringify(j.q)} → want ${j.want}, rank ${rank < 0 ? '>10' : rank + 1}; got ${urls.slice(0, 3).map(norm).join(', ')}`);
}

async function airlockRun(
  siteDir: string,
  site: string,
  js: Judgment[],
  s: Score,
  ask: (q: string) => string = (q) => q,
  options: QueryOptions = {},
): Promise<{ buildMs: number; pages: number }> {
  const t0 = performance.now();
  const idx = SearchIndex.create();
  for (const path of await htmlFiles(siteDir)) idx.add(path, extractPage(await readBounded(join(siteDir, path))));
  const buildMs = performance.now() - t0;
  // as a search worker does (src/search/worker-entry.ts): pages' text kept for the next queries
  const texts = new PageTexts(8_000_000);
  const pageText = (file: string) => texts.get(site, file, async () => extractPage(await readBounded(join(siteDir, file))));
  for (const j of js) {
    const t = performance.now();
    const hits = await idx.query(ask(j.q), pageText, { ...options, pageSize: 10 });
    record(
      s,
      site,
      j,
      hits.map((h) => h.metadata.page),
      performance.now() - t,
    );
  }
  return { buildMs, pages: idx.size };
}

/** Pagefind's Node API (the `pagefind` dev dependency), the part used here. */
interface PagefindNode {
  createIndex(o: Record<string, unknown>): Promise<{
    index?: { addDirectory(o: { path: string }): Promise<{ errors: string[]; page_count: number }>; writeFiles(o: { outputPath: string }): Promise<unknown> };
    errors: string[];
  }>;
  close(): Promise<void>;
}
async function loadPagefind(): Promise<PagefindNode> {
  const name = 'pagefind'; // resolved at run time: a missing install is named, not a type error
  try {
    return (await import(name)) as PagefindNode;
  } catch {
    throw new Error('bench:search: the pagefind dev dependency is not installed; run npm install');
  }
}

type PagefindModule = {
  options(o: Record<string, unknown>): Promise<void>;
  init(): Promise<void>;
  destroy(): Promise<void>;
  search(q: string): Promise<{ results: Array<{ data(): Promise<{ url: string }> }> }>;
};

async function pagefindRun(siteDir: string, site: string, js: Judgment[], s: Score): Promise<{ buildMs: number; pages: number }> {
  const out = join(OUT, 'pagefind', site);
  const t0 = performance.now();
  let pages = 0;
  let buildMs = 0;
  if (!existsSync(join(out, 'pages.txt'))) {
    const pagefind = await loadPagefind();
    const { index, errors } = await pagefind.createIndex({});
    if (!index) throw new Error(`pagefind: ${errors.join('; ')}`);
    const r = await index.addDirectory({ path: siteDir });
    if (r.errors.length) throw new Error(`pagefind: ${r.errors.join('; ')}`);
    await rm(out, { recursive: true, force: true });
    await index.writeFiles({ outputPath: join(out, 'pagefind') });
    await pagefind.close();
    buildMs = performance.now() - t0;
    await writeFile(join(out, 'pages.txt'), `${r.page_count} ${buildMs}`);
  }
  [pages, buildMs] = (await readFile(join(out, 'pages.txt'), 'utf8')).split(' ').map(Number) as [number, number];
  // pagefind.js runs in the reader's browser and fetches its files from the site; here a fetch
  // shim reads them from disk
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (u: string | URL) => {
    const url = new URL(String(u), 'http://site.invalid/');
    return new Response(await readFile(join(out, decodeURIComponent(url.pathname))));
  }) as typeof fetch;
  try {
    const pf = (await import(pathToFileURL(join(out, 'pagefind/pagefind.js')).href)) as PagefindModule;
    let lang: string | undefined | null = null;
    for (const j of js) {
      const want = readerLanguage(j.q);
      if (want !== lang) {
        if (lang !== null) await pf.destroy();
        await pf.options({ basePath: '/pagefind/', baseUrl: '/', ...(want ? { language: want } : {}) });
        await pf.init();
        lang = want;
      }
      const t = performance.now();
      const r = await pf.search(j.q);
      const data = await Promise.all(r.results.slice(0, 10).map((x) => x.data()));
      record(
        s,
        site,
        j,
        data.map((d) => d.url),
        performance.now() - t,
      );
    }
  } finally {
    globalThis.fetch = realFetch;
  }
  return { buildMs, pages };
}

const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]! : NaN);

/** The folder of one real site (fetched and assembled when missing): what other benchmarks serve. */
export async function realSite(name: string): Promise<string> {
  await fetchPackages();
  const names = await assembleSites();
  if (!names.includes(name)) throw new Error(`bench: no real site ${name} (there are ${names.join(', ')})`);
  return join(OUT, 'sites', name);
}

export interface JudgedSummary {
  engine: string;
  top1: number;
  top3: number;
  top5: number;
  mrr: number;
}

/**
 * Prints the judged table; returns the overall scores per engine. `judgments`: another judged set
 * (bench:assistant's questions), same shape; `ask` and `options`: what airlock's search is asked for
 * each (the assistant's query of a question, ranked by any of its words); Pagefind is given the
 * text as written.
 */
export async function judgedPart(judgments = 'bench/search/judgments.json', ask?: (q: string) => string, options?: QueryOptions): Promise<JudgedSummary[]> {
  const got = await fetchPackages();
  process.stderr.write(
    `bench:search: real sites from ${Object.entries(got)
      .map(([p, v]) => `${p} ${v}`)
      .join(', ')}\n`,
  );
  const siteNames = await assembleSites();
  const all = (JSON.parse(await readFile(join(ROOT, judgments), 'utf8')) as { queries: Judgment[] }).queries;
  const engines = [
    ['airlock', airlockRun],
    ['pagefind', pagefindRun],
  ] as const;
  const total: Record<string, Score> = { airlock: blank(), pagefind: blank() };
  const rows: string[] = [];
  const misses: string[] = [];
  for (const site of siteNames) {
    const js = all.filter((j) => j.site === site);
    const dir = join(OUT, 'sites', site);
    const files = new Set((await htmlFiles(dir)).map(norm));
    for (const j of js)
      for (const w of [j.want, j.alt])
        if (w !== undefined && !files.has(norm(w))) throw new Error(`bench:search: judged page ${site}/${w} is not in the site (a different package version?)`);
    for (const [name, run] of engines) {
      const s = blank();
      const { buildMs, pages } = name === 'airlock' ? await airlockRun(dir, site, js, s, ask, options) : await run(dir, site, js, s);
      const t = total[name]!;
      t.n += s.n;
      t.top1 += s.top1;
      t.top3 += s.top3;
      t.top5 += s.top5;
      t.rr += s.rr;
      t.ms.push(...s.ms);
      t.misses.push(...s.misses);
      rows.push(
        `${site.padEnd(17)} ${name.padEnd(9)} ${String(pages).padStart(5)} ${String(s.n).padStart(7)}  ${(s.top1 / s.n).toFixed(2).padStart(5)}  ${(s.top3 / s.n).toFixed(2).padStart(5)}  ${(s.top5 / s.n).toFixed(2).padStart(5)}  ${(s.rr / s.n).toFixed(2).padStart(4)}  ${(buildMs / 1000).toFixed(1).padStart(7)}  ${(pct(s.ms, 0.5).toFixed(1) + '/' + pct(s.ms, 0.95).toFixed(1)).padStart(13)}`,
      );
      if (name === 'airlock') misses.push(...s.misses.map((m) => `airlock  ${m}`));
      else misses.push(...s.misses.map((m) => `pagefind ${m}`));
    }
  }
  console.log(`site              engine    pages queries  top-1  top-3  top-5   MRR  build s  query p50/p95 ms`);
  for (const r of rows) console.log(r);
  const out: JudgedSummary[] = [];
  for (const [name] of engines) {
    const t = total[name]!;
    console.log(
      `${'ALL'.padEnd(17)} ${name.padEnd(9)} ${''.padStart(5)} ${String(t.n).padStart(7)}  ${(t.top1 / t.n).toFixed(2).padStart(5)}  ${(t.top3 / t.n).toFixed(2).padStart(5)}  ${(t.top5 / t.n).toFixed(2).padStart(5)}  ${(t.rr / t.n).toFixed(2).padStart(4)}  ${''.padStart(7)}  ${(pct(t.ms, 0.5).toFixed(1) + '/' + pct(t.ms, 0.95).toFixed(1)).padStart(13)}`,
    );
    out.push({ engine: name, top1: t.top1 / t.n, top3: t.top3 / t.n, top5: t.top5 / t.n, mrr: t.rr / t.n });
  }
  if (process.env.BENCH_SEARCH_MISSES) for (const m of misses) console.log(m);
  return out;
}
