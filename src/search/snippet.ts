import { escapeRegExp } from '../util/regexp.js';

/** A search hit's snippet: about SNIPPET characters of a section's text around the first matched word, as escaped HTML. */
const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const SNIPPET = 180;

/** About SNIPPET characters of `text` around the first matched word, escaped, matches in <mark>. */
export function snippet(text: string, terms: readonly string[]): string {
  const words = [...new Set(terms.filter((t) => t !== ''))].sort((a, b) => b.length - a.length).slice(0, 20);
  const re = words.length ? new RegExp(words.map(escapeRegExp).join('|'), 'giu') : null;
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
