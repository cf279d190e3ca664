import { plainText } from '../util/terminal.js';
import { CompactCore, type CoreHit } from './compact.js';
import { coreFromLines, coreLines, parseLine } from './compact-lines.js';
import { rankByPassage } from './passages.js';
import { snippet } from './snippet.js';
import { langTag, MAX_HEADING, type ExtractedPage } from './extract.js';
import { bestSection, sectionTerms } from './sections.js';
import { queryTokens } from './tokenize.js';
import { fieldFactor, languageFactor, listingFactor, pathTraits, queryShape, scriptLanguages, versionFactor, type PathTraits } from './rank.js';

/**
 * The local search index of one version: compact.ts underneath (chosen on
 * bench/search.ts's numbers against MiniSearch and FlexSearch, see docs/benchmarks.md and docs/decisions.md), one
 * document per PAGE (title, headings, text). The text itself is not kept: for the (at most 50)
 * hits of a query the page is read and extracted again (`PageText`, ~0.5 ms a page), and the hit
 * is placed in the section that holds most of the matched words, which gives the deep link
 * (`/page#anchor`) and the snippet (HTML-escaped, matched words in `<mark>`). Prefix search on the
 * last word (the one being typed) and typo tolerance when exact/prefix matching finds too little;
 * title and headings weigh more; AND of the words first, OR when that finds nothing.
 */
export interface SearchPage {
  /** URL path (`/a/b`). */
  path: string;
  /** Manifest path of the HTML file (`a/b.html`), to read its text again for snippets. */
  file: string;
  title: string;
  /** The page's language (a locale in its path, else its `<html lang>`), when known. */
  lang?: string;
  /** Share of its text that is link text, when a third or more (listing pages). */
  links?: number;
}
/** The extracted text of a page (its manifest path) for snippets, or null when it cannot be read. */
export type PageText = (file: string) => Promise<ExtractedPage | null>;

export interface SearchHit {
  /** Snippet as HTML: escaped text, matched words in `<mark>`. */
  content: string;
  /** `/page#anchor` (same origin). */
  path: string;
  metadata: { title: string; heading: string; anchor: string | null; page: string; score: number };
  /** The best section's whole text (plain, at most QueryOptions.sectionChars): only when asked (the local assistant quotes it). */
  text?: string;
}

export interface QueryOptions {
  pageSize?: number;
  /** Only results whose page path starts with this (e.g. `/api-reference/`). */
  pathPrefix?: string;
  /** The reader's language (`ja`, `zh-CN`): its pages first, other copies of a page dropped. */
  language?: string;
  /** The page the reader is on (`/latest/guide/x`): its version's and language's copies first. */
  page?: string;
  /** Ranked pages only: no page is read for its best section and snippet (content and heading empty). */
  scoresOnly?: boolean;
  /** Also give each hit's best section as plain text, cut to this many characters (`text`). */
  sectionChars?: number;
  /** Rank pages by any of the words (not all of them first), each in any of its English forms, then by their best section (passages.ts): the local assistant's questions. */
  anyWords?: boolean;
}

/** Candidates (the core's best by BM25) that the ranking signals of rank.ts reorder. */
const RERANK = 200;
/** A question's pages whose sections are ranked as passages (byPassage): measured on bench/assistant.ts's judged questions. */
const PASSAGE_POOL = 20;

export const MAX_PAGE_SIZE = 50;
/** A language tag as a page record holds it (`ja`, `zh-Hant-TW`). */
const LANG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8}){0,4}$/;

/** The page URL of a manifest path (`a/b.html` → `/a/b`, `a/index.html` → `/a/`). */
export function urlOfPage(path: string): string {
  if (path === 'index.html') return '/';
  if (path.endsWith('/index.html')) return '/' + path.slice(0, -'index.html'.length);
  return '/' + (path.endsWith('.html') ? path.slice(0, -5) : path);
}

/**
 * A page URL as a link: each segment percent-encoded, so a file name's own `%`, `?` or `#` stays a
 * name (a folder named `%2e%2e` is never read by a browser as `..`, out of the page's site).
 */
export function hrefOf(url: string): string {
  return url
    .split('/')
    .map((seg) => encodeURIComponent(seg).replace(/%(2[46BC]|3[ABD]|40)/gi, (m) => decodeURIComponent(m)))
    .join('/');
}

export class SearchIndex {
  private traitsOf: Array<PathTraits | undefined> = [];
  private byPath: Map<string, number> | null = null;
  private siteLang: string | null | undefined;

  private constructor(
    private readonly core: CompactCore,
    readonly pages: SearchPage[],
  ) {}

  private traits(id: number): PathTraits {
    return (this.traitsOf[id] ??= pathTraits(this.pages[id]!.path));
  }

  /** The site's default language: its root page's, else the language of most pages, else null. */
  private defaultLanguage(): string | null {
    if (this.siteLang !== undefined) return this.siteLang;
    const root = this.pages.find((p) => p.path === '/');
    let lang = root?.lang ?? null;
    if (lang === null) {
      const n = new Map<string, number>();
      for (const p of this.pages) if (p.lang) n.set(p.lang, (n.get(p.lang) ?? 0) + 1);
      const [top] = [...n].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      lang = top && top[1] * 2 > this.pages.length ? top[0] : null;
    }
    return (this.siteLang = lang);
  }

  /** The record of the reader's current page (`/a/b`, `/a/b.html`, `/a/`), if indexed. */
  private pageAt(path: string): SearchPage | undefined {
    if (this.byPath === null) {
      this.byPath = new Map();
      this.pages.forEach((p, i) => this.byPath!.set(p.path, i));
    }
    const i = this.byPath.get(path) ?? this.byPath.get(path.replace(/\.html$/, '').replace(/\/index$/, '/'));
    return i === undefined ? undefined : this.pages[i];
  }

  static create(): SearchIndex {
    return new SearchIndex(new CompactCore(), []);
  }

  static build(input: Iterable<{ path: string; page: ExtractedPage }>): SearchIndex {
    const idx = SearchIndex.create();
    for (const { path, page } of input) idx.add(path, page);
    return idx;
  }

  /** Index one page (its text is not kept: see PageText). */
  add(path: string, page: ExtractedPage): void {
    if (page.sections.length === 0 && page.title === '') return;
    const url = urlOfPage(path);
    const rec: SearchPage = { path: url, file: path, title: page.title };
    const lang = pathTraits(url).lang ?? page.lang;
    if (lang) rec.lang = lang;
    if ((page.linkShare ?? 0) >= 0.33) rec.links = Math.round(page.linkShare! * 100) / 100;
    this.pages.push(rec);
    this.siteLang = undefined;
    this.byPath = null;
    // the file name's words count too: a contents page named `plpgsql` may not say the word
    this.core.add({ title: page.title, name: pathTraits(url).name, sections: page.sections });
  }

  /**
   * The index as JSON lines for the cache file (cache-file.ts): the pages, then the core's lines
   * (terms in batches, typed arrays in base64 chunks), so no single string holds the whole index.
   */
  *serializeLines(): Generator<string> {
    yield JSON.stringify(this.pages);
    yield* coreLines(this.core);
  }

  /**
   * Throws on anything that is not what serializeLines wrote for these pages (`files`: the
   * version's HTML files, manifest paths): a page record must name one of them, once, at its URL,
   * within the limits extraction keeps. The caller rebuilds.
   */
  static deserialize(lines: readonly string[], files: ReadonlySet<string>): SearchIndex {
    if (lines.length < 2) throw new Error('not a search index');
    const pages = parseLine(lines[0]!, 'the line of page records') as SearchPage[];
    if (!Array.isArray(pages)) throw new Error('not a search index');
    const named = new Set<string>();
    for (const p of pages) {
      if (typeof p?.path !== 'string' || typeof p.file !== 'string' || typeof p.title !== 'string' || p.title.length > MAX_HEADING)
        throw new Error('bad page record');
      if ((p.lang !== undefined && !(typeof p.lang === 'string' && LANG.test(p.lang))) || (p.links !== undefined && !(p.links >= 0 && p.links <= 1)))
        throw new Error('bad page record');
      const shown = JSON.stringify(p.file.slice(0, 100));
      if (!files.has(p.file)) throw new Error(`a page record names ${shown}, not a page of this version`);
      if (named.has(p.file)) throw new Error(`two page records name ${shown}`);
      if (p.path !== urlOfPage(p.file)) throw new Error('bad page record');
      named.add(p.file);
    }
    const core = coreFromLines(lines.slice(1));
    if (core.docCount !== pages.length) throw new Error(`index holds ${core.docCount} pages, records ${pages.length}`);
    return new SearchIndex(core, pages);
  }

  get size(): number {
    return this.pages.length;
  }

  /**
   * The core's candidates reordered by rank.ts's signals (title and file name, listing pages,
   * language, version), then copies of one page collapsed into the best placed one.
   */
  private rank(q: string, hits: readonly CoreHit[], fuzzy: boolean, o: QueryOptions): Array<CoreHit & { pref: number }> {
    const shape = queryShape(q, fuzzy, o.anyWords === true);
    const current = o.page ? this.pageAt(o.page) : undefined;
    const currentTraits = o.page ? pathTraits(current?.path ?? o.page) : null;
    const asked = langTag(o.language) ?? current?.lang ?? currentTraits?.lang ?? undefined;
    const script = scriptLanguages(q);
    const site = this.defaultLanguage();
    const reader = asked ? [asked] : (script ?? (site ? [site] : null));
    const latin = script === null && /\p{Script=Latin}/u.test(q);
    // Copies of one page (the same key) form one result: shown as the copy the reader prefers
    // (language, then version; the better match on a tie), placed by the best-matching copy.
    const groups = new Map<string, { id: number; pref: number; score: number; best: number }>();
    for (const h of hits) {
      const p = this.pages[h.id]!;
      const t = this.traits(h.id);
      const f = fieldFactor(shape, p.title, t.name);
      const score = h.score * f.factor * listingFactor(p.links ?? 0, f.named);
      const pref = languageFactor(p.lang ?? null, reader, latin) * versionFactor(t.version, currentTraits?.version ?? null);
      const g = groups.get(t.key);
      if (!g) groups.set(t.key, { id: h.id, pref, score, best: score });
      else {
        if (pref > g.pref || (pref === g.pref && score > g.score)) Object.assign(g, { id: h.id, pref, score });
        g.best = Math.max(g.best, score);
      }
    }
    return [...groups.values()].map((g) => ({ id: g.id, score: g.best * g.pref, pref: g.pref })).sort((a, b) => b.score - a.score || a.id - b.id);
  }

  /**
   * A question's best pages by their best section (passages.ts), among the PASSAGE_POOL pages placed
   * first; each hit is given that section. Unreadable pages drop out; when no section holds a word,
   * the page order stands.
   */
  private async byPassage(q: string, ranked: ReadonlyArray<CoreHit & { pref: number }>, pageText: PageText, pageSize: number) {
    const pool = ranked.slice(0, Math.max(PASSAGE_POOL, pageSize));
    const texts = await Promise.all(pool.map((r) => pageText(this.pages[r.id]!.file).catch(() => null)));
    const words = [...new Set(queryTokens(q))].slice(0, 12).map((t) => this.core.sectionWord(t));
    const cands = pool.map((r, i) => ({ id: r.id, title: this.pages[r.id]!.title, sections: texts[i]?.sections ?? [], weight: r.pref }));
    const byPassage = rankByPassage(cands, words, this.core.avgSectionLen);
    return byPassage.length > 0 ? byPassage.slice(0, pageSize) : ranked.slice(0, pageSize);
  }

  async query(q: string, pageText: PageText, o: QueryOptions = {}): Promise<SearchHit[]> {
    const pageSize = Math.min(MAX_PAGE_SIZE, Math.max(1, o.pageSize ?? 10));
    const prefix = o.pathPrefix;
    const filter = prefix ? (id: number) => this.pages[id]!.path.startsWith(prefix) : undefined;
    // Exact and prefix matches first; typo tolerance only when they find too little (a word that exists is what the reader meant);
    // AND of the words, OR when that finds nothing (or at once for a question's subject words, anyWords: a page rarely holds them all).
    let fuzzy = false;
    let res = this.core.search(q, { fuzzy, and: !o.anyWords, forms: o.anyWords, filter });
    if (res.hits.length < pageSize) res = this.core.search(q, { fuzzy: (fuzzy = true), and: !o.anyWords, forms: o.anyWords, filter });
    if (res.hits.length === 0) res = this.core.search(q, { fuzzy, and: false, filter });
    const matched = res.terms;
    const typed = new Set(queryTokens(q));
    const ranked = this.rank(q, res.hits.slice(0, RERANK), fuzzy, o);
    const hits = o.anyWords && !o.scoresOnly ? await this.byPassage(q, ranked, pageText, pageSize) : ranked.slice(0, pageSize);
    return Promise.all(
      hits.map(async (r) => {
        const page = this.pages[r.id]!;
        const text = o.scoresOnly || 'section' in r ? null : await pageText(page.file).catch(() => null);
        const sec = 'section' in r ? r.section : bestSection(text?.sections ?? [], matched, typed);
        const held = sec ? sectionTerms(sec, matched) : null;
        return {
          content: sec ? snippet(plainText(sec.text || sec.heading), [...new Set([...held!.heading, ...held!.text])]) : '',
          path: hrefOf(page.path) + (sec?.anchor ? '#' + encodeURIComponent(sec.anchor) : ''),
          metadata: {
            title: plainText(page.title),
            heading: plainText(sec?.heading ?? ''),
            anchor: sec?.anchor ?? null,
            page: page.path,
            score: Math.round(r.score * 1000) / 1000,
          },
          ...(o.sectionChars ? { text: plainText(sec?.text || sec?.heading || '').slice(0, o.sectionChars) } : {}),
        };
      }),
    );
  }
}
