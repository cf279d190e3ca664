import { isCjk, queryTokens, tokenize } from './tokenize.js';
import { within } from './typo.js';
import { stemOf } from './forms.js';

/**
 * Ranking signals beyond BM25 (engine.ts applies them to the core's best candidates), all general,
 * none about a particular site:
 * - the page's TITLE and its FILE NAME (`sql-createtable`, `asyncio-task`, `worker_threads`) hold
 *   the query's words, and how much of them the query covers (the query `create table` names the
 *   page `CREATE TABLE`, not `CREATE TABLESPACE`); the query's words joined (`data model` →
 *   `datamodel`, `pg_dump` → `pgdump`) count as the name;
 * - LISTING pages (an index, a table of contents: nearly all of their text is link text) weigh less;
 * - COPIES of one page (the same path under `/latest/`, `/dev/`, `/3.11/`, or in another language:
 *   `/ja/x`, `x.ja.html`) collapse into one result: the reader's current version, else the
 *   unversioned copy, else latest/stable, else the highest number; the reader's language (asked for,
 *   else the current page's, else the query's script, else the site's default), else a language of
 *   the query's script.
 */

/** Locales as doc sites name them in a path (`/ja/…`, `/zh-cn/…`, `page.de.html`). */
const LOCALE =
  /^(en|ja|zh|ko|de|fr|es|pt|it|ru|pl|nl|tr|uk|vi|id|ar|he|fa|hi|th|cs|sv|da|fi|nb|no|hu|ro|el|bg|ca|sk|sl|hr|sr|lt|lv|et|ms|bn|ta)(-[a-z]{2,4})?$/;
const VERSION = /^(latest|stable|current|dev|development|next|main|master|nightly|canary|unstable|v?\d+(\.\d+){0,2}(\.x)?)$/;

export interface PathTraits {
  /** The path with version and language parts removed: copies of one page share it. */
  key: string;
  lang: string | null;
  version: string | null;
  /** The file name's words (`/api/worker_threads` → `worker_threads`, `worker`, `threads`). */
  name: string;
}

/** Language, version and copy key of a page URL path (`/latest/ja/guide/x`, `/ch02.en`). */
export function pathTraits(path: string): PathTraits {
  const segs = path.split('/').slice(1);
  let lang: string | null = null;
  let version: string | null = null;
  const kept: string[] = [];
  segs.forEach((raw, i) => {
    const s = raw.toLowerCase();
    const dir = i < segs.length - 1;
    if (dir && i < 3 && version === null && VERSION.test(s)) version = s;
    else if (dir && i < 3 && lang === null && LOCALE.test(s)) lang = s;
    else kept.push(raw);
  });
  let file = kept.pop() ?? '';
  const suffix = /^(.+)\.([a-z]{2}(?:-[a-z]{2,4})?)$/i.exec(file);
  if (suffix && LOCALE.test(suffix[2]!.toLowerCase())) {
    lang ??= suffix[2]!.toLowerCase();
    file = suffix[1]!;
  }
  if (file === 'index') file = '';
  const name = file || kept[kept.length - 1] || '';
  return { key: [...kept, file].join('/'), lang, version, name };
}

const primary = (l: string) => l.split('-')[0]!;
const CJK_LANGS = new Set(['ja', 'zh', 'ko']);

/** The reader's language as the query's script tells it: `ja` (kana), `ko` (Hangul), `zh|ja` (Han only), or null. */
export function scriptLanguages(query: string): string[] | null {
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(query)) return ['ja'];
  if (/\p{Script=Hangul}/u.test(query)) return ['ko'];
  if (/\p{Script=Han}/u.test(query)) return ['zh', 'ja'];
  return null;
}

/** Preference of a page's language: 1 the reader's (0.95 its other regions: zh-tw for zh-cn), 0.8 unknown, 0.5 another. */
export function languageFactor(pageLang: string | null, reader: readonly string[] | null, latinQuery: boolean): number {
  if (pageLang === null) return reader ? 0.8 : 1;
  const p = primary(pageLang);
  if (reader) return reader.includes(pageLang) ? 1 : reader.some((r) => primary(r) === p) ? 0.95 : 0.5;
  // no reader language: a query in Latin letters prefers pages not in a CJK language
  return latinQuery && CJK_LANGS.has(p) ? 0.5 : 1;
}

/** Preference of a page's version: the reader's, then unversioned, latest/stable, numbered, others. */
export function versionFactor(version: string | null, current: string | null): number {
  if (current !== null) return version === current ? 1 : version === null ? 0.97 : 0.9;
  if (version === null) return 1;
  if (/^(latest|stable|current)$/.test(version)) return 0.98;
  if (/^v?\d/.test(version)) return 0.95;
  return 0.9;
}

/** The title without a site suffix (`Coroutines — Python 3.11 documentation` → `Coroutines`). */
export function titleHead(title: string): string {
  const m = /^(.+?)\s+[—|·–-]\s+[^—|·–]+$/.exec(title);
  return m ? m[1]! : title;
}

export interface QueryShape {
  toks: string[];
  /** The query's words joined (`datamodel`, `data_model`, `pgdump`), as a file name would hold them. */
  joined: Set<string>;
  fuzzy: boolean;
  /** Each word's Porter stem, when a word's other English forms count (`exceptions` in a title for `exception`). */
  stems: Array<string | null> | null;
  /** Stems of the title and name words met so far in this query's candidates (each stemmed once). */
  seen: Map<string, string | null>;
}

export function queryShape(query: string, fuzzy: boolean, forms = false): QueryShape {
  const toks = [...new Set(queryTokens(query))].slice(0, 12);
  const joined = new Set<string>();
  if (toks.length > 1) {
    joined.add(toks.join(''));
    joined.add(toks.join('_'));
    // two neighbouring words (`full text search` → `textsearch`)
    for (let i = 0; i + 1 < toks.length; i++) joined.add(toks[i]! + toks[i + 1]!);
  }
  joined.add(toks.join('').replace(/_/g, ''));
  return { toks, joined, fuzzy, stems: forms ? toks.map(stemOf) : null, seen: new Map() };
}

function sameForm(s: QueryShape, i: number, w: string): boolean {
  if (s.stems?.[i] == null) return false;
  let stem = s.seen.get(w);
  if (stem === undefined) s.seen.set(w, (stem = stemOf(w)));
  return stem === s.stems[i];
}

function has(words: ReadonlySet<string>, s: QueryShape, i: number): boolean {
  const q = s.toks[i]!;
  const last = i === s.toks.length - 1;
  const fuzzy = s.fuzzy;
  if (words.has(q)) return true;
  if (s.stems !== null) for (const w of words) if (sameForm(s, i, w)) return true;
  if (!last && !fuzzy) return false;
  for (const w of words) {
    if (last && w.startsWith(q) && q.length >= 3) return true;
    if (fuzzy && !isCjk(q) && q.length >= 4 && within(q, w, q.length < 8 ? 1 : 2)) return true;
  }
  return false;
}

/** Share of the query's words in `words`, and share of `words` the query covers. */
function overlap(s: QueryShape, words: ReadonlySet<string>): { inField: number; covered: number } {
  if (s.toks.length === 0 || words.size === 0) return { inField: 0, covered: 0 };
  let n = 0;
  s.toks.forEach((_, i) => void (has(words, s, i) && n++));
  let c = 0;
  for (const w of words)
    if (
      s.toks.some(
        (q, i) =>
          w === q || (i === s.toks.length - 1 && w.startsWith(q)) || sameForm(s, i, w) || (s.fuzzy && q.length >= 4 && within(q, w, q.length < 8 ? 1 : 2)),
      )
    )
      c++;
  return { inField: n / s.toks.length, covered: c / words.size };
}

const meaningful = (w: string) => !/^\d+$/.test(w);

/**
 * How much the title and the file name say the page is about the query (≥ 1), and whether they
 * name it outright (every query word in the title, or a file name that is the query's words).
 */
export function fieldFactor(s: QueryShape, title: string, name: string): { factor: number; named: boolean } {
  const t = overlap(s, new Set(tokenize(titleHead(title)).filter(meaningful)));
  const nameWords = new Set(tokenize(name).filter(meaningful));
  let n = overlap(s, nameWords);
  const flat = name.toLowerCase().replace(/[^\p{L}\p{N}_]+/gu, '');
  if (n.inField < 1 && [...s.joined].some((j) => j.length >= 4 && (nameWords.has(j) || flat === j)))
    n = { inField: 1, covered: nameWords.has(flat) || flat === [...s.joined][0] ? 1 : n.covered };
  return {
    factor: (1 + 0.6 * t.inField + (t.inField === 1 ? 0.6 * t.covered : 0)) * (1 + 0.8 * n.inField + (n.inField === 1 ? 0.6 * n.covered : 0)),
    named: t.inField === 1 || (n.inField === 1 && n.covered === 1),
  };
}

/** A listing page (an index, a table of contents) weighs half, unless its title or name is what the reader typed (a chapter's contents page). */
export const listingFactor = (linkShare: number, named: boolean) => (linkShare >= 0.6 && !named ? 0.5 : 1);
