import MiniSearch, { type SearchResult } from 'minisearch';
import { isCjk, queryTokens, tokenize } from './tokenize.js';
import type { ExtractedPage, PageSection } from './extract.js';


/**
 * The local search index of one version (issue 17): MiniSearch underneath (chosen on
 * bench/search.ts's numbers, see docs/readme/17.md), one document per PAGE (title, headings,
 * text), so the index holds one posting per word and page rather than per section (half the
 * memory at 10,000 pages). The text itself is not kept: for the (at most 50) hits of a query the
 * page is read and extracted again (`PageText`, ~0.5 ms a page), and the hit is placed in the
 * section that holds most of the matched words, which gives the deep link (`/page#anchor`) and
 * the snippet (HTML-escaped, matched words in `<mark>`). Prefix search on the last word and typo tolerance when the exact/prefix search
 * finds too little; title and headings boosted; AND of the words first, OR when that finds nothing.
 */
export interface SearchPage {
  /** URL path (`/a/b`). */
  path: string;
  /** Manifest path of the HTML file (`a/b.html`), to read its text again for snippets. */
  file: string;
  title: string;
}
/** The extracted text of a page (its manifest path) for snippets, or null when it cannot be read. */
export type PageText = (file: string) => Promise<ExtractedPage | null>;

export interface SearchHit {
  /** Snippet as HTML: escaped text, matched words in `<mark>`. */
  content: string;
  /** `/page#anchor` (same origin). */
  path: string;
  metadata: { title: string; heading: string; anchor: string | null; page: string; score: number };
}

export interface QueryOptions {
  pageSize?: number;
  /** Only results whose page path starts with this (e.g. `/api-reference/`). */
  pathPrefix?: string;
}

const FIELDS = ['title', 'headings', 'text'];
const OPTIONS = {
  fields: FIELDS,
  storeFields: [] as string[],
  tokenize: (text: string) => tokenize(text),
  processTerm: (t: string) => t,
  searchOptions: { tokenize: (text: string) => queryTokens(text) },
};
export const MAX_PAGE_SIZE = 50;

/** The page URL of a manifest path (`a/b.html` → `/a/b`, `a/index.html` → `/a/`). */
export function urlOfPage(path: string): string {
  if (path === 'index.html') return '/';
  if (path.endsWith('/index.html')) return '/' + path.slice(0, -'index.html'.length);
  return '/' + (path.endsWith('.html') ? path.slice(0, -5) : path);
}

export class SearchIndex {
  private constructor(
    private readonly ms: MiniSearch,
    readonly pages: SearchPage[],
  ) {}

  static create(): SearchIndex {
    return new SearchIndex(new MiniSearch(OPTIONS), []);
  }

  static build(input: Iterable<{ path: string; page: ExtractedPage }>): SearchIndex {
    const idx = SearchIndex.create();
    for (const { path, page } of input) idx.add(path, page);
    return idx;
  }

  /** Index one page (its text is not kept: see PageText). */
  add(path: string, page: ExtractedPage): void {
    if (page.sections.length === 0 && page.title === '') return;
    const id = this.pages.push({ path: urlOfPage(path), file: path, title: page.title }) - 1;
    this.ms.add({ id, title: page.title, headings: page.sections.map((x) => x.heading).join(' \n '), text: page.sections.map((x) => x.text).join(' \n ') });
  }

  /**
   * The index as JSON lines for the cache file (cache-file.ts): pages, the engine's state without
   * its term index, then the term index in batches, so no single string holds the whole index.
   */
  *serializeLines(batch = 20_000): Generator<string> {
    yield JSON.stringify(this.pages);
    const { index, ...rest } = this.ms.toJSON();
    yield JSON.stringify(rest);
    for (let i = 0; i < index.length; i += batch) yield JSON.stringify(index.slice(i, i + batch));
  }

  /** Throws on anything that is not what serializeLines wrote (the caller rebuilds). */
  static deserialize(lines: readonly string[]): SearchIndex {
    if (lines.length < 2) throw new Error('not a search index');
    const pages = JSON.parse(lines[0]!) as SearchPage[];
    const rest = JSON.parse(lines[1]!) as Record<string, unknown>;
    if (!Array.isArray(pages) || rest === null || typeof rest !== 'object' || Array.isArray(rest)) throw new Error('not a search index');
    for (const p of pages) {
      if (typeof p?.path !== 'string' || typeof p.file !== 'string' || typeof p.title !== 'string' || !p.path.startsWith('/')) throw new Error('bad page record');
    }
    const index: unknown[] = [];
    for (const line of lines.slice(2)) {
      const part = JSON.parse(line) as unknown;
      if (!Array.isArray(part)) throw new Error('bad term index batch');
      for (const e of part) index.push(e);
    }
    for (const e of index) {
      if (!Array.isArray(e) || typeof e[0] !== 'string' || e[1] === null || typeof e[1] !== 'object') throw new Error('bad term index entry');
    }
    const ms = MiniSearch.loadJS({ ...rest, index } as unknown as Parameters<typeof MiniSearch.loadJS>[0], OPTIONS);
    if (ms.documentCount !== pages.length) throw new Error(`index holds ${ms.documentCount} documents, records ${pages.length}`);
    return new SearchIndex(ms, pages);
  }

  get size(): number {
    return this.pages.length;
  }

  async query(q: string, pageText: PageText, o: QueryOptions = {}): Promise<SearchHit[]> {
    const pageSize = Math.min(MAX_PAGE_SIZE, Math.max(1, o.pageSize ?? 10));
    const terms = queryTokens(q).slice(0, 12);
    if (terms.length === 0) return [];
    const text = terms.join(' ');
    const prefix = o.pathPrefix;
    const base = {
      // prefix on the last word only (the one being typed): a prefix on every word of a common
      // phrase multiplies the terms scored, which is what costs time on a large site
      prefix: (t: string, i: number, all: string[]) => i === all.length - 1 && (t.length >= 2 || isCjk(t)),
      boost: { title: 4, headings: 2, text: 1 },
      filter: prefix ? (r: SearchResult) => this.pages[r.id as number]!.path.startsWith(prefix) : undefined,
    };
    const fuzzy = { ...base, fuzzy: (t: string) => (isCjk(t) || t.length < 4 ? false : t.length < 8 ? 1 : 2), maxFuzzy: 2 };
    // Exact and prefix matches first; typo tolerance only when they find too little (it is the
    // expensive part on common words, and a word that exists is what the reader meant).
    let res = this.ms.search(text, { ...base, combineWith: 'AND' });
    if (res.length < pageSize) res = this.ms.search(text, { ...fuzzy, combineWith: 'AND' });
    if (res.length === 0 && terms.length > 1) res = this.ms.search(text, { ...fuzzy, combineWith: 'OR' });
    return Promise.all(res.slice(0, pageSize).map(async (r) => {
      const page = this.pages[r.id as number]!;
      const sec = bestSection((await pageText(page.file).catch(() => null))?.sections ?? [], r.terms);
      return {
        content: sec ? snippet(sec.text || sec.heading, r.terms) : '',
        path: page.path + (sec?.anchor ? '#' + encodeURIComponent(sec.anchor) : ''),
        metadata: { title: page.title, heading: sec?.heading ?? '', anchor: sec?.anchor ?? null, page: page.path, score: Math.round(r.score * 1000) / 1000 },
      };
    }));
  }
}

/** The section holding most of the matched words (whole words; heading words count triple); the first on a tie. */
function bestSection(sections: readonly PageSection[], terms: readonly string[]): PageSection | null {
  let best: PageSection | null = null;
  let bestScore = -1;
  for (const s of sections) {
    const h = new Set(tokenize(s.heading));
    const t = new Set(tokenize(s.text));
    let score = 0;
    for (const w of terms) score += (h.has(w) ? 3 : 0) + (t.has(w) ? 1 : 0);
    if (score > bestScore) {
      best = s;
      bestScore = score;
    }
  }
  return best;
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const SNIPPET = 180;

/** About SNIPPET characters of `text` around the first matched word, escaped, matches in <mark>. */
export function snippet(text: string, terms: readonly string[]): string {
  const words = [...new Set(terms.filter((t) => t !== ''))].sort((a, b) => b.length - a.length).slice(0, 20);
  const re = words.length ? new RegExp(words.map(escapeRe).join('|'), 'giu') : null;
  const lower = text.toLowerCase();
  let first = -1;
  for (const w of words) {
    const i = lower.indexOf(w);
    if (i >= 0 && (first < 0 || i < first)) first = i;
  }
  let start = Math.max(0, first - 60);
  if (start > 0) {
    const sp = text.indexOf(' ', start);
    if (sp >= 0 && sp < first) start = sp + 1;
  }
  let end = Math.min(text.length, start + SNIPPET);
  if (end < text.length) {
    const sp = text.lastIndexOf(' ', end);
    if (sp > first && sp > start) end = sp;
  }
  const cut = text.slice(start, end);
  let html = '';
  let at = 0;
  if (re) {
    for (const m of cut.matchAll(re)) {
      html += escapeHtml(cut.slice(at, m.index)) + '<mark>' + escapeHtml(m[0]) + '</mark>';
      at = m.index + m[0].length;
    }
  }
  html += escapeHtml(cut.slice(at));
  return (start > 0 ? '…' : '') + html + (end < text.length ? '…' : '');
}
