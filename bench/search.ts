/**
 * npm run bench:search [-- --part judged|speed --pages 10000 --queries 200 --engines minisearch,flexsearch]
 *
 * Two parts. JUDGED (bench/search-real.ts): does the search find the page a reader means, on real
 * documentation sites, beside Pagefind; top-1, top-3 and MRR of judged queries. SPEED: the local
 * search index, measured on a generated site of `--pages` pages (nav,
 * sidebar, footer around a main article with 4-7 sections; a Zipf-distributed vocabulary of
 * 40,000 words plus identifiers; every 10th page partly Japanese). Each engine runs in a fresh
 * child process (so peak RSS is its own) over the same files and the same extraction
 * (src/search/extract.ts), and reports:
 * - build time (page by page: read 16 ahead, extract, index, as src/search/build.ts does) and the
 *   extraction's share of it (and, as its peer, lol-html's text callbacks alone over the same
 *   files), peak RSS after the build and after serializing for the cache file (maxRSS of the
 *   child), serialized index size,
 * - query latency p50/p95 (server side: the engine's search + snippets) for common words, rare
 *   words and words with a typo, and how many typo queries still find the page with the word.
 * Engines: `airlock` (src/search/engine.ts over compact.ts, what serve uses) and its peers
 * MiniSearch 7 and FlexSearch 0.8 (Document index, `tokenize: 'forward'`), all with one document
 * per page, the same Intl.Segmenter tokenizer and snippets from the page read again. Ratios of
 * the first engine to each other are printed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createRng, type Rng } from '../fixtures/prng.js';
import { extractPage, type ExtractedPage } from '../src/search/extract.js';
import { SearchIndex } from '../src/search/engine.js';
import { snippet } from '../src/search/snippet.js';
import { queryTokens, tokenize } from '../src/search/tokenize.js';
import { readBounded } from '../src/search/build.js';
import { judgedPart } from './search-real.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    part: { type: 'string' },
    pages: { type: 'string', default: '10000' },
    queries: { type: 'string', default: '200' },
    engines: { type: 'string', default: 'airlock,minisearch,flexsearch' },
    child: { type: 'string' },
    dir: { type: 'string' },
  },
});
const PAGES = Number(args.pages);
const dir = resolve(args.dir ?? join(ROOT, `bench/out/search-${PAGES}`));

// ---------- the generated site ----------
const SYL = [
  'ka',
  'to',
  'ri',
  'mon',
  'del',
  'sa',
  'ver',
  'lin',
  'qu',
  'zor',
  'pa',
  'ne',
  'ux',
  'tra',
  'bel',
  'fi',
  'gor',
  'ha',
  'est',
  'wi',
  'ro',
  'cy',
  'dan',
  'lo',
];
function vocabulary(rng: Rng, n: number): string[] {
  const set = new Set<string>();
  while (set.size < n) {
    let w = '';
    const k = rng.int(2, 4);
    for (let i = 0; i < k; i++) w += rng.pick(SYL);
    set.add(w);
  }
  return [...set];
}
const JA = [
  '設定',
  '認証',
  'ウェブフック',
  '検索',
  'デプロイ',
  '環境変数',
  'アクセストークン',
  'を構成します',
  'の手順',
  'ローカライズ',
  'エラー',
  'ページ',
  'は',
  'を使って',
  'します。',
];

function zipf(rng: Rng, n: number): number {
  // inverse-CDF approximation of Zipf(s≈1): rank = n^u
  return Math.min(n - 1, Math.floor(Math.pow(n, rng.next()) - 1));
}

async function generate(): Promise<void> {
  if (existsSync(join(dir, 'done'))) return;
  const rng = createRng(17);
  const vocab = vocabulary(rng, 40_000);
  const words = (k: number) => Array.from({ length: k }, () => vocab[zipf(rng, vocab.length)]).join(' ');
  const nav = `<nav><ul>${Array.from({ length: 40 }, (_, i) => `<li><a href="/g/${i}">Navigation entry ${i} ${vocab[i]}</a></li>`).join('')}</ul></nav>`;
  for (let p = 0; p < PAGES; p++) {
    const title = `${words(3)} ${p}`;
    let main = `<h1 id="top">${title}</h1><p>${words(40)}.</p>`;
    const sections = rng.int(4, 7);
    for (let s = 0; s < sections; s++) {
      main += `<h2 id="s${s}-${p}">${words(3)}</h2><p>${words(rng.int(60, 140))}.</p><pre><code>client.${vocab[zipf(rng, vocab.length)]}Id_${p}_${s}()</code></pre><p>${words(50)} &amp; more.</p>`;
      if (p % 10 === 0) main += `<p>${Array.from({ length: 30 }, () => rng.pick(JA)).join('')}</p>`;
    }
    const html = `<!doctype html><html><head><title>${title} - Docs</title><script>window.x=1</script><style>body{}</style></head><body><header>Site header ${vocab[1]}</header>${nav}<aside>On this page ${vocab[2]}</aside><main><article>${main}</article></main><footer>Footer text ${vocab[3]} copyright</footer></body></html>`;
    await mkdir(join(dir, 'site', `g${p % 50}`), { recursive: true });
    await writeFile(join(dir, 'site', `g${p % 50}`, `page-${p}.html`), html);
  }
  await writeFile(join(dir, 'done'), '');
}

async function listPages(): Promise<string[]> {
  const out: string[] = [];
  for (const g of (await readdir(join(dir, 'site'))).sort()) for (const f of (await readdir(join(dir, 'site', g))).sort()) out.push(`${g}/${f}`);
  return out;
}

// ---------- a child: one engine ----------
interface Engine {
  add(path: string, page: ExtractedPage): void;
  serializedBytes(): Promise<number>;
  /** Top results' section texts. */
  query(q: string): Promise<Array<{ text: string }>>;
}

// as the search worker does: the hits' pages are read and extracted again for their snippets
const pageText = async (file: string) => extractPage(await readFile(join(dir, 'site', file)));

/** src/search/engine.ts (compact.ts underneath): what airlock serves. */
function airlockEngine(): Engine {
  const idx = SearchIndex.create();
  return {
    add: (path, page) => idx.add(path, page),
    serializedBytes: async () => {
      let n = 0;
      for (const l of idx.serializeLines()) n += Buffer.byteLength(l) + 1;
      return n;
    },
    query: async (q) => (await idx.query(q, pageText, { pageSize: 10 })).map((h) => ({ text: h.content })),
  };
}

/** MiniSearch 7 with the same documents, tokenizer and query plan (prefix on the last word, fuzzy when too few). */
async function miniSearchEngine(): Promise<Engine> {
  const { default: MiniSearch } = await import('minisearch');
  const options = {
    fields: ['title', 'headings', 'text'],
    storeFields: [] as string[],
    tokenize: (t: string) => tokenize(t),
    processTerm: (t: string) => t,
    searchOptions: { tokenize: (t: string) => queryTokens(t) },
  };
  const ms = new MiniSearch(options);
  const files: string[] = [];
  const base = { prefix: (t: string, i: number, all: string[]) => i === all.length - 1, boost: { title: 4, headings: 2, text: 1 } };
  const fuzzy = { ...base, fuzzy: (t: string) => (t.length < 4 ? false : t.length < 8 ? 1 : 2), maxFuzzy: 2 };
  return {
    add: (path, page) => {
      const id = files.push(path) - 1;
      ms.add({ id, title: page.title, headings: page.sections.map((s) => s.heading).join(' \n '), text: page.sections.map((s) => s.text).join(' \n ') });
    },
    serializedBytes: async () => {
      const { index, ...rest } = ms.toJSON();
      let n = Buffer.byteLength(JSON.stringify(rest));
      for (let i = 0; i < index.length; i += 20_000) n += Buffer.byteLength(JSON.stringify(index.slice(i, i + 20_000)));
      return n;
    },
    query: async (q) => {
      let res = ms.search(q, { ...base, combineWith: 'AND' });
      if (res.length < 10) res = ms.search(q, { ...fuzzy, combineWith: 'AND' });
      if (res.length === 0) res = ms.search(q, { ...fuzzy, combineWith: 'OR' });
      return Promise.all(
        res.slice(0, 10).map(async (r) => ({ text: snippet((await pageText(files[r.id as number]!)).sections.map((s) => s.text).join(' '), r.terms) })),
      );
    },
  };
}

async function flexSearchEngine(): Promise<Engine> {
  const { Document } = await import('flexsearch');
  type Doc = { id: number; title: string; headings: string; text: string };
  const index = new Document<Doc>({
    document: { id: 'id', index: ['title', 'headings', 'text'], store: false },
    tokenize: 'forward',
    encode: (t: string) => tokenize(t),
  } as ConstructorParameters<typeof Document<Doc>>[0]);
  const files: string[] = [];
  return {
    // one document per page, like src/search/engine.ts, and no text kept either
    add: (path, page) => {
      const id = files.push(path) - 1;
      index.add({ id, title: page.title, headings: page.sections.map((s) => s.heading).join(' \n '), text: page.sections.map((s) => s.text).join(' \n ') });
    },
    serializedBytes: async () => {
      let n = 0;
      await index.export((key: string, data: string) => void (n += key.length + (data?.length ?? 0)));
      return n + Buffer.byteLength(JSON.stringify(files));
    },
    query: async (q) => {
      const res = index.search(q, { limit: 10, suggest: true }) as Array<{ field: string; result: number[] }>;
      const ids = [...new Set(res.flatMap((r) => r.result))].slice(0, 10);
      const terms = queryTokens(q);
      return Promise.all(ids.map(async (id) => ({ text: snippet((await pageText(files[id]!)).sections.map((s) => s.text).join(' '), terms) })));
    },
  };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function child(name: string): Promise<void> {
  const paths = await listPages();
  const engine = name === 'airlock' ? airlockEngine() : name === 'minisearch' ? await miniSearchEngine() : await flexSearchEngine();
  // as src/search/build.ts does: page by page, in order, read (readBounded, 16 pages ahead)
  // → extract → index, no text kept
  let extractMs = 0;
  let sections = 0;
  const t0 = performance.now();
  const ahead: Array<Promise<Buffer>> = [];
  const read = (i: number) => readBounded(join(dir, 'site', paths[i]!));
  for (let i = 0; i < Math.min(16, paths.length); i++) ahead.push(read(i));
  for (let i = 0; i < paths.length; i++) {
    const html = await ahead.shift()!;
    if (i + 16 < paths.length) ahead.push(read(i + 16));
    const te = performance.now();
    const page = extractPage(html);
    extractMs += performance.now() - te;
    sections += page.sections.length;
    engine.add(paths[i]!, page);
  }
  const buildMs = performance.now() - t0;
  const rssAfterBuildMb = process.resourceUsage().maxRSS / 1024;
  const bytes = await engine.serializedBytes();
  const rssAfterSerializeMb = process.resourceUsage().maxRSS / 1024;
  // The peer for extraction: lol-html (html-rewriter-wasm) with nothing but a text callback, the
  // least any extraction with it does; the same files.
  const { HTMLRewriter } = await import('html-rewriter-wasm');
  const tl = performance.now();
  for (const path of paths) {
    const rw = new HTMLRewriter(() => {});
    rw.onDocument({ text: () => {} });
    await rw.write(await readFile(join(dir, 'site', path)));
    await rw.end();
    rw.free();
  }
  const lolHtmlFloorMs = performance.now() - tl;
  // query sets from the corpus: document frequencies of section words (page by page: the
  // extracted text of 10,000 pages kept alive during the timed queries would make their p95 the
  // major GCs of a heap no server has)
  const df = new Map<string, number>();
  for (const path of paths) {
    for (const s of extractPage(await readFile(join(dir, 'site', path))).sections) for (const w of new Set(tokenize(s.text))) df.set(w, (df.get(w) ?? 0) + 1);
  }
  const byDf = [...df].filter(([w]) => /^[a-z]{6,}$/.test(w)).sort((a, b) => b[1] - a[1]);
  const n = Number(args.queries);
  const common = byDf.slice(0, 50).map(([w]) => w);
  const rare = byDf.slice(-500).map(([w]) => w); // the 500 rarest words
  const rng = createRng(7);
  const sets = {
    common: Array.from({ length: n }, (_, i) => common[i % common.length]! + (i % 2 ? ' ' + common[(i * 7) % common.length] : '')),
    rare: Array.from({ length: n }, () => rng.pick(rare)),
    typo: Array.from({ length: n }, () => rng.pick(rare)),
  };
  const typoOf = (w: string) => {
    const i = 2 + (w.length % (w.length - 3));
    return w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2);
  };
  const result: Record<string, unknown> = {
    engine: name,
    pages: paths.length,
    sections,
    extractMs,
    lolHtmlFloorMs,
    buildMs,
    indexBytes: bytes,
    peakRssMb: rssAfterBuildMb,
    serializeRssMb: rssAfterSerializeMb,
  };
  for (const [set, qs] of Object.entries(sets)) {
    const times: number[] = [];
    let found = 0;
    for (const q of qs) {
      const query = set === 'typo' ? typoOf(q) : q;
      const s = performance.now();
      const hits = await engine.query(query);
      times.push(performance.now() - s);
      if (hits.some((h) => h.text.toLowerCase().includes(q.split(' ')[0]!))) found++;
    }
    result[set] = { p50: pct(times, 0.5), p95: pct(times, 0.95), found: found / qs.length };
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

// ---------- parent ----------
interface Stat {
  p50: number;
  p95: number;
  found: number;
}
interface Row {
  engine: string;
  pages: number;
  sections: number;
  extractMs: number;
  lolHtmlFloorMs: number;
  buildMs: number;
  indexBytes: number;
  peakRssMb: number;
  serializeRssMb: number;
  common: Stat;
  rare: Stat;
  typo: Stat;
}
async function main(): Promise<void> {
  if (args.child) return child(args.child);
  if (args.part !== 'speed') {
    const judged = await judgedPart();
    const [a, p] = judged;
    console.log(
      `judged: airlock top-1 ${a!.top1.toFixed(2)} (goal ≥ 0.80), top-3 ${a!.top3.toFixed(2)} (goal ≥ 0.95); Pagefind top-1 ${p!.top1.toFixed(2)}, top-3 ${p!.top3.toFixed(2)}`,
    );
    if (args.part === 'judged') return;
  }
  const g0 = performance.now();
  await generate();
  process.stderr.write(`bench:search: ${PAGES} pages in ${dir} (${((performance.now() - g0) / 1000).toFixed(1)} s to generate)\n`);
  const rows: Row[] = [];
  for (const e of args.engines!.split(',')) {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', e, '--pages', String(PAGES), '--queries', args.queries!, '--dir', dir],
      { encoding: 'utf8', maxBuffer: 1 << 24 },
    );
    rows.push(JSON.parse(out.trim().split('\n').pop()!) as Row);
  }
  const f = (x: number, d = 1) => x.toFixed(d);
  console.log(
    `engine      pages  sections  extract s  build s  peak RSS MB  +serialize MB  index MB  common p50/p95 ms  rare p50/p95 ms  typo p50/p95 ms  typo found`,
  );
  for (const r of rows) {
    console.log(
      `${r.engine.padEnd(10)}  ${String(r.pages).padStart(5)}  ${String(r.sections).padStart(8)}  ${f(r.extractMs / 1000).padStart(9)}  ${f(r.buildMs / 1000).padStart(7)}  ${f(r.peakRssMb, 0).padStart(11)}  ${f(r.serializeRssMb, 0).padStart(13)}  ${f(r.indexBytes / 1048576).padStart(8)}  ${(f(r.common.p50, 2) + '/' + f(r.common.p95, 2)).padStart(17)}  ${(f(r.rare.p50, 2) + '/' + f(r.rare.p95, 2)).padStart(15)}  ${(f(r.typo.p50, 2) + '/' + f(r.typo.p95, 2)).padStart(15)}  ${f(r.typo.found * 100, 0).padStart(9)}%`,
    );
  }
  for (const r of rows)
    console.log(
      `${r.engine}: extraction ${f(r.extractMs / r.pages, 3)} ms/page with src/search/scan-html.ts vs ${f(r.lolHtmlFloorMs / r.pages, 3)} ms/page for lol-html's text callbacks alone (${f(r.lolHtmlFloorMs / r.extractMs, 1)}x)`,
    );
  const [a] = rows;
  for (const b of rows.slice(1)) {
    const ratio = (k: (r: Row) => number) => f(k(a!) / k(b), 2);
    console.log(
      `ratio ${a!.engine}/${b.engine}: build ${ratio((r) => r.buildMs)}x, peak RSS ${ratio((r) => r.peakRssMb)}x, index size ${ratio((r) => r.indexBytes)}x, common p95 ${ratio((r) => r.common.p95)}x, rare p95 ${ratio((r) => r.rare.p95)}x, typo p95 ${ratio((r) => r.typo.p95)}x`,
    );
  }
}

await main();
