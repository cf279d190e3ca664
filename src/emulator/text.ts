/**
 * Just enough text retrieval for the assistant and search stand-ins: HTML to words, and a
 * keyword score. Pure functions over strings.
 */
export interface Page {
  path: string;
  url: string;
  title: string;
  text: string;
}
export interface Hit {
  page: Page;
  score: number;
  snippet: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

export function htmlTitle(html: string): string {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  return m ? decode(m[1]!).trim() : '';
}

/** Visible text of the page body: scripts, styles, head and tags removed, entities decoded. */
export function htmlText(html: string): string {
  const body = /<body[^>]*>([\s\S]*)<\/body>/i.exec(html)?.[1] ?? html;
  const noCode = body.replace(/<(script|style|noscript|template|nav|header|footer)\b[\s\S]*?<\/\1>/gi, ' ');
  return decode(noCode.replace(/<[^>]+>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();
}

function decode(s: string): string {
  return s.replace(/&(#?\w+);/g, (m, e: string) => ENTITIES[e] ?? (e.startsWith('#') ? String.fromCodePoint(Number(e.slice(1)) || 63) : m));
}

/** Lowercase words of 3+ letters, minus the commonest English ones (they match everything). */
export function terms(q: string): string[] {
  const stop = new Set(['the', 'and', 'for', 'how', 'what', 'with', 'does', 'can', 'you', 'are', 'this', 'that', 'from', 'use']);
  return [...new Set(q.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])].filter((w) => !stop.has(w));
}

/** Pages ranked by term hits (title hits count triple); only pages with at least one hit. */
export function rank(pages: Page[], query: string, limit: number): Hit[] {
  const ts = terms(query);
  if (ts.length === 0) return [];
  const hits: Hit[] = [];
  for (const page of pages) {
    const body = page.text.toLowerCase();
    const title = page.title.toLowerCase();
    let score = 0;
    for (const t of ts) score += count(body, t) + 3 * count(title, t);
    if (score > 0) hits.push({ page, score, snippet: snippet(page.text, ts) });
  }
  hits.sort((a, b) => b.score - a.score || (a.page.path < b.page.path ? -1 : 1));
  return hits.slice(0, limit);
}

function count(hay: string, needle: string): number {
  let n = 0;
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** About `words` words of the page around the first matching term. */
export function snippet(text: string, ts: string[], words = 40): string {
  const lower = text.toLowerCase();
  const first = Math.min(...ts.map((t) => lower.indexOf(t)).filter((i) => i >= 0), text.length);
  const start = first >= text.length ? 0 : text.lastIndexOf(' ', Math.max(0, first - 80)) + 1;
  return text.slice(start).split(' ').slice(0, words).join(' ');
}
