/**
 * What kind of inline `<script>` this is, from its `type` (HTML "prepare the script element").
 * - executable: classic JS, modules, import maps and speculation rules — the browser checks these
 *   against `script-src`, so each kept one needs its hash in the page's CSP;
 * - data: JSON blocks (`__NEXT_DATA__`, JSON-LD) that never run and never need a hash;
 * - other: anything else (e.g. `text/partytown`, which a worker later runs): no hash, but still
 *   screened for analytics snippets.
 */
export type ScriptKind = 'executable' | 'data' | 'other';

// The JavaScript MIME type essences of the WHATWG MIME Sniffing standard.
const JS_TYPES = new Set([
  'application/ecmascript',
  'application/javascript',
  'application/x-ecmascript',
  'application/x-javascript',
  'text/ecmascript',
  'text/javascript',
  'text/javascript1.0',
  'text/javascript1.1',
  'text/javascript1.2',
  'text/javascript1.3',
  'text/javascript1.4',
  'text/javascript1.5',
  'text/jscript',
  'text/livescript',
  'text/x-ecmascript',
  'text/x-javascript',
]);
const EXECUTABLE_KEYWORDS = new Set(['module', 'importmap', 'speculationrules']);

export function scriptKind(type: string | null): ScriptKind {
  const t = (type ?? '').trim().toLowerCase();
  if (t === '' || JS_TYPES.has(t.split(';')[0]!.trim()) || EXECUTABLE_KEYWORDS.has(t)) return 'executable';
  if (t === 'application/json' || t === 'application/ld+json' || t.endsWith('+json')) return 'data';
  return 'other';
}

/**
 * Framework data payloads that quote the page's own content: a docs page ABOUT Google Analytics
 * carries `gtag('config', …)` inside Next.js's RSC stream (`self.__next_f.push([1,"…"])`).
 * Screening those for snippets would delete the page's hydration data, so they are never
 * treated as analytics; a real bootstrap snippet is also never this large.
 */
const PAYLOAD = /^\s*\(?\s*self\.__next_[a-z]\b/;
export const SNIPPET_MAX_CHARS = 32 * 1024;

export function mayBeSnippet(text: string): boolean {
  return text.length <= SNIPPET_MAX_CHARS && !PAYLOAD.test(text);
}

/**
 * From the first text chunk: does this script need screening (held back until its end)? Framework
 * payloads are only observed (hashed), which halves the rewriter's work on Next.js pages. A chunk
 * too short to show the prefix is screened, to be safe.
 */
export function needsScreening(firstChunk: string): boolean {
  return !PAYLOAD.test(firstChunk);
}

/** An export that sets the flags itself would override airlock's; such scripts are dropped. */
export const SPOOFED_FLAGS = /__AIRLOCK_FEATURES__\s*=/;
