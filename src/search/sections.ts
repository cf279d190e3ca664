import type { PageSection } from './extract.js';
import { ASCII, isCjk } from './tokenize.js';

/**
 * Which of a query's matched words a page's section holds, for placing a hit in the section that
 * holds its words. Found by searching the section's text for each word and checking that it stands
 * alone (no letter, digit or `_` on either side), as the tokenizer would cut it: much faster than
 * cutting a large reference page into words at every query that lists it, and nothing is kept.
 */
const WORD_CHAR = /[\p{L}\p{M}\p{N}_]/u;
const ASCII_WORD_CHAR = /[a-z0-9_]/;

/** Text as the tokenizer sees it before cutting: lower-case, and NFKC-normalised when not ASCII. */
export const asIndexed = (s: string) => (ASCII.test(s) ? s.toLowerCase() : s.normalize('NFKC').toLowerCase());
const wordChar = (c: string | undefined) => c !== undefined && (c < '\x80' ? ASCII_WORD_CHAR.test(c) : WORD_CHAR.test(c));

/** Does `text` (as indexed) hold `term` as a word of its own? A CJK term, cut into characters and pairs, as a part of a word. */
function holds(text: string, term: string): boolean {
  if (isCjk(term)) return text.includes(term);
  for (let i = text.indexOf(term); i >= 0; i = text.indexOf(term, i + 1)) if (!wordChar(text[i - 1]) && !wordChar(text[i + term.length])) return true;
  return false;
}

/** The matched terms a section holds, in its heading and in its text. */
export function sectionTerms(s: PageSection, terms: readonly string[]): { heading: string[]; text: string[] } {
  const h = asIndexed(s.heading);
  const t = asIndexed(s.text);
  return { heading: terms.filter((w) => holds(h, w)), text: terms.filter((w) => holds(t, w)) };
}

/**
 * The section holding most of the words as the reader typed them (`typed`: a section with `token`
 * before one with only its typo neighbour `taken`), then most of all the matched words (whole
 * words; heading words count triple); the first on a tie.
 */
export function bestSection(sections: readonly PageSection[], terms: readonly string[], typed: ReadonlySet<string>): PageSection | null {
  let best: PageSection | null = null;
  let bestTyped = -1;
  let bestAll = -1;
  for (const s of sections) {
    const held = sectionTerms(s, terms);
    const all = 3 * held.heading.length + held.text.length;
    const asTyped = 3 * held.heading.filter((w) => typed.has(w)).length + held.text.filter((w) => typed.has(w)).length;
    if (asTyped > bestTyped || (asTyped === bestTyped && all > bestAll)) [best, bestTyped, bestAll] = [s, asTyped, all];
  }
  return best;
}
