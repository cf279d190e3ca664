import type { PageSection } from './extract.js';
import { tokenize } from './tokenize.js';

/**
 * The words of a page's sections, for placing a hit in the section that holds its words. Kept per
 * section object while the page's extracted text is kept (page-texts.ts holds it for the next
 * queries; a WeakMap lets them go together): a large page is tokenized once, not at every query
 * that lists it.
 */
const memo = new WeakMap<PageSection, { heading: Set<string>; text: Set<string> }>();

export function sectionWords(s: PageSection): { heading: Set<string>; text: Set<string> } {
  let w = memo.get(s);
  if (w === undefined) memo.set(s, (w = { heading: new Set(tokenize(s.heading)), text: new Set(tokenize(s.text)) }));
  return w;
}

/** The section holding most of the matched words (whole words; heading words count triple); the first on a tie. */
export function bestSection(sections: readonly PageSection[], terms: readonly string[]): PageSection | null {
  let best: PageSection | null = null;
  let bestScore = -1;
  for (const s of sections) {
    const { heading, text } = sectionWords(s);
    let score = 0;
    for (const w of terms) score += (heading.has(w) ? 3 : 0) + (text.has(w) ? 1 : 0);
    if (score > bestScore) {
      best = s;
      bestScore = score;
    }
  }
  return best;
}
