/**
 * An attribute value as the browser reads it: lol-html hands over the raw source text, so
 * `href="…?a=1&amp;b=2"` arrives with its entity. Only numeric references and the named ones a
 * URL uses are decoded (enough to compare URLs; anything else stays as written). Pure. Lives in
 * src/features so the served-HTML cache key (html-cache/key.ts digests this folder) covers it.
 */
const NAMED: Record<string, string> = { amp: '&', quot: '"', apos: "'", lt: '<', gt: '>' };

export function decodeAttr(raw: string): string {
  if (!raw.includes('&')) return raw;
  return raw.replace(/&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|([a-z]{2,4}));?/gi, (m, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) return NAMED[name.toLowerCase()] ?? m;
    const cp = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
    return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
  });
}
