/**
 * Character references in HTML text and attribute values, which lol-html hands over raw: the
 * search index decodes the text it stores, and the air-gapped rules decode a `src` before they
 * judge it (`/js/scr&#105;pt.js` is `/js/script.js` to the browser).
 */
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', eacute: 'é', egrave: 'è', uuml: 'ü', ouml: 'ö', auml: 'ä', szlig: 'ß', '#39': "'", ndash: '–', mdash: '—', hellip: '…', copy: '©', reg: '®', trade: '™', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«', raquo: '»', middot: '·', times: '×', rarr: '→', larr: '←' };

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
