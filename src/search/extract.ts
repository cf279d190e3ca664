import { scanHtml } from './scan-html.js';

/**
 * What a page contributes to the local search index: its title and the text of its
 * MAIN content cut into sections at headings. A heading with an id (or an id on an element inside
 * it, as many doc generators put `<a id>` in the heading) starts a section that deep-links as
 * `page#id`. Main content is `main`, `article` or `[role=main]`; a page without one falls back to
 * `body` minus nav, header, footer and aside. Scripts, styles, templates, SVG and navigation never
 * count. One pass of a small tag scanner (scan-html.ts), pure: bytes in, sections out. Not
 * lol-html (html-rewriter-wasm, which the page transform uses): its text callbacks cross the wasm
 * boundary per chunk and cost 2-3 ms a page against 0.1-0.2 ms here (bench/search.ts), which is
 * the difference between a 10,000-page index in seconds and in half a minute.
 */
export interface PageSection {
  /** The heading's id (`page#anchor`), or null for the text before the first heading with one. */
  anchor: string | null;
  heading: string;
  text: string;
}
export interface ExtractedPage {
  title: string;
  sections: PageSection[];
  /** The `lang` of the page's `<html>` element, lower-cased, when it names one. */
  lang?: string;
  /** Share of the indexed text that is link text (a listing page that only links is near 1). */
  linkShare?: number;
}

/** Upper bounds for one page: a page beyond them is indexed by its first part only. */
export const MAX_PAGE_TEXT = 256 * 1024;
/** Sections of one page; a heading past them is indexed as words of the last section's text. */
export const MAX_SECTIONS = 2000;
/** The longest heading or title kept (characters). */
export const MAX_HEADING = 300;
const MAX_ANCHOR = 200;

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  eacute: 'é',
  egrave: 'è',
  uuml: 'ü',
  ouml: 'ö',
  auml: 'ä',
  szlig: 'ß',
  '#39': "'",
  ndash: '–',
  mdash: '—',
  hellip: '…',
  copy: '©',
  reg: '®',
  trade: '™',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  middot: '·',
  times: '×',
  rarr: '→',
  larr: '←',
};

/** Decode the character references that text chunks carry raw (lol-html does not decode them). */
export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z][a-zA-Z0-9]{1,31});?/g, (m, ref: string) => {
    if (ref.charCodeAt(0) === 35 /* # */) {
      const cp = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : '\uFFFD';
    }
    return NAMED[ref] ?? NAMED[ref.toLowerCase()] ?? m;
  });
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

class Collector {
  sections: Array<{ anchor: string | null; heading: string; parts: string[] }> = [{ anchor: null, heading: '', parts: [] }];
  size = 0;
  push(t: string): void {
    if (this.size >= MAX_PAGE_TEXT) return;
    const s = t.length + this.size > MAX_PAGE_TEXT ? t.slice(0, MAX_PAGE_TEXT - this.size) : t;
    this.size += s.length;
    this.sections[this.sections.length - 1]!.parts.push(s);
  }
  /** A new section for a heading; false when there are MAX_SECTIONS already. */
  start(anchor: string | null): boolean {
    if (this.sections.length > MAX_SECTIONS) return false; // the text before the first heading is one more
    this.sections.push({ anchor, heading: '', parts: [] });
    return true;
  }
  current() {
    return this.sections[this.sections.length - 1]!;
  }
  result(): PageSection[] {
    return this.sections
      .map((s) => ({ anchor: s.anchor, heading: squash(s.heading).slice(0, MAX_HEADING), text: squash(decodeEntities(s.parts.join(''))) }))
      .filter((s) => s.text !== '' || s.heading !== '');
  }
}

const HARD_SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'nav', 'aside', 'iframe', 'object', 'select', 'textarea', 'button']);
const CHROME = new Set(['header', 'footer']);
const MAIN = new Set(['main', 'article']);
const HEADING = /^h[1-6]$/;

/** The searchable content of one HTML page. */
export function extractPage(html: Uint8Array | string): ExtractedPage {
  const text = typeof html === 'string' ? html : Buffer.from(html.buffer, html.byteOffset, html.byteLength).toString('utf8');
  const main = new Collector();
  const body = new Collector();
  let inMain = 0;
  let hard = 0;
  let chrome = 0;
  let title = '';
  let h1 = '';
  let lang: string | undefined;
  let inLink = 0;
  let linkMain = 0;
  let linkBody = 0;
  // The open heading: which collectors it started a section in, its id (if any), its text.
  let heading: { main: boolean; body: boolean; started: readonly [boolean, boolean]; level: number; id: string | null; text: string } | null = null;
  const endHeading = () => {
    if (heading === null) return;
    const t = squash(decodeEntities(heading.text));
    if (heading.level === 1 && h1 === '') h1 = t;
    for (const [c, used, started] of [
      [main, heading.main, heading.started[0]],
      [body, heading.body, heading.started[1]],
    ] as const) {
      if (!used) continue;
      if (!started) {
        c.push(` ${t} `); // past MAX_SECTIONS: its words stay, in the last section's text
        continue;
      }
      const s = c.current();
      s.heading = t;
      if (s.anchor === null && heading.id !== null) s.anchor = heading.id;
    }
    heading = null;
  };
  const anchorOf = (id: string | undefined): string | null => (id !== undefined && id !== '' && id.length <= MAX_ANCHOR ? id : null);

  scanHtml(text, {
    open(name, attrs) {
      const role = attrs.get('role')?.toLowerCase();
      const isMain = MAIN.has(name) || role === 'main';
      const isHard = HARD_SKIP.has(name) || attrs.has('hidden') || attrs.get('aria-hidden')?.toLowerCase() === 'true';
      const isChrome = CHROME.has(name);
      const isLink = name === 'a' && attrs.has('href');
      if (name === 'html' && lang === undefined) lang = langTag(attrs.get('lang'));
      let isHeading = false;
      if (HEADING.test(name) && hard === 0 && !isHard) {
        endHeading();
        const id = anchorOf(attrs.get('id'));
        const inM = inMain > 0;
        const inB = chrome === 0;
        const started = [inM && main.start(id), inB && body.start(id)] as const;
        heading = { main: inM, body: inB, started, level: Number(name.slice(1)), id, text: '' };
        isHeading = true;
      } else if (heading !== null && heading.id === null && attrs.has('id')) {
        // `<h2><a id="x" href="#x">…</a></h2>`: an id inside the heading names the section.
        heading.id = anchorOf(attrs.get('id'));
      }
      if (isMain) inMain++;
      if (isHard) hard++;
      if (isChrome) chrome++;
      if (isLink) inLink++;
      return () => {
        if (isLink) inLink--;
        if (isMain) inMain--;
        if (isHard) hard--;
        if (isChrome) chrome--;
        if (isHeading) endHeading();
      };
    },
    text(s) {
      if (hard > 0) return;
      if (heading !== null) {
        if (heading.text.length < MAX_HEADING * 4) heading.text += s + ' ';
        return; // a heading's words are indexed as the section's heading, not again in its text
      }
      if (inMain > 0) main.push(s);
      if (chrome === 0) body.push(s);
      if (inLink > 0) {
        if (inMain > 0) linkMain += s.length;
        if (chrome === 0) linkBody += s.length;
      }
    },
    title(s) {
      if (title === '') title = s.slice(0, MAX_HEADING * 4);
    },
  });
  endHeading();
  const fromMain = main.result();
  const useMain = fromMain.some((s) => s.text !== '');
  const sections = useMain ? fromMain : body.result();
  const linkShare = useMain ? linkMain / Math.max(1, main.size) : linkBody / Math.max(1, body.size);
  const page: ExtractedPage = { title: squash(decodeEntities(title)).slice(0, MAX_HEADING) || h1, sections, linkShare: Math.min(1, linkShare) };
  if (lang !== undefined) page.lang = lang;
  return page;
}

/** A language tag as `<html lang>` gives it (`en`, `zh-CN`, `pt_BR`), lower-cased with `-`, or undefined. */
export function langTag(v: string | undefined): string | undefined {
  const t = v?.trim().toLowerCase().replace(/_/g, '-');
  return t && /^[a-z]{2,3}(-[a-z0-9]{2,8}){0,3}$/.test(t) ? t : undefined;
}
