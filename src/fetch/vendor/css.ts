/**
 * The URL references of a stylesheet (vendoring), pure: `@import "…"`, `@import url(…)` and every
 * `url(…)`, quoted or not. Comments are skipped; `data:` URLs are left alone. Not a CSS parser:
 * it finds what a browser would fetch from ordinary stylesheets (minified or not), which is all
 * vendoring needs, and leaves every other byte of the text unchanged when it rewrites.
 */
export interface CssRef {
  /** The reference as written (unquoted, unescaped only of surrounding whitespace). */
  url: string;
  /** `@import` (a stylesheet) or `url()` (a font, an image…). */
  via: 'import' | 'url';
  /** Where the written form (with its quotes, if any) sits in the text: [start, end). */
  start: number;
  end: number;
}

// One alternation so that comments and strings are consumed before anything inside them can match.
const TOKENS =
  /\/\*[\s\S]*?(?:\*\/|$)|@import\s+(?:url\(\s*)?(["'])((?:\\.|(?!\1)[^\\\n])*)\1|@import\s+url\(\s*([^"'()\s]+)\s*\)|url\(\s*(["'])((?:\\.|(?!\4)[^\\\n])*)\4\s*\)|url\(\s*([^"'()\s]+)\s*\)|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/dgi;

export function cssRefs(text: string): CssRef[] {
  const refs: CssRef[] = [];
  TOKENS.lastIndex = 0;
  for (let m = TOKENS.exec(text); m !== null; m = TOKENS.exec(text)) {
    if (m[0].startsWith('/*') || m[0].startsWith('"') || m[0].startsWith("'")) continue;
    const at = (g: number, quoted: boolean, via: CssRef['via']) => {
      const [s, e] = m!.indices![g]!;
      const q = quoted ? 1 : 0;
      refs.push({ url: m![g]!.trim(), via, start: s - q, end: e + q });
    };
    if (m[2] !== undefined) at(2, true, 'import');
    else if (m[3] !== undefined) at(3, false, 'import');
    else if (m[5] !== undefined) at(5, true, 'url');
    else if (m[6] !== undefined) at(6, false, 'url');
  }
  return refs.filter((r) => r.url !== '' && !/^data:/i.test(r.url));
}

/** The text with each reference that `map` answers replaced by `"<answer>"` (quoted); the rest unchanged. */
export function rewriteCss(text: string, map: (ref: CssRef) => string | undefined): string {
  let out = '';
  let last = 0;
  for (const r of cssRefs(text)) {
    const to = map(r);
    if (to === undefined) continue;
    out += text.slice(last, r.start) + JSON.stringify(to);
    last = r.end;
  }
  return out + text.slice(last);
}

/** A reference resolved against the stylesheet's own URL (protocol-relative and relative forms too), or null. */
export function resolveRef(ref: string, base: string): string | null {
  try {
    const u = new URL(ref, base);
    u.hash = '';
    return u.href;
  } catch {
    return null;
  }
}
