import type { PageSection } from './extract.js';
import { asIndexed } from './sections.js';
import { ASCII, isCjk } from './tokenize.js';
import { escapeRegExp } from '../util/regexp.js';

/**
 * The local assistant's retrieval, pure: the SECTIONS of a question's candidate pages ranked by
 * BM25 as passages of their own (each section with its page's title once and its heading twice;
 * each question word's rarity counted among all sections of the site, compact.ts), and each page
 * placed by its best section. A question names a thing a page explains in one section
 * (`os.freemem()`, `collections.Counter`), so a long reference page, which page-level BM25
 * weighs down for its length, is found by the section that answers; that section is what the model
 * is given. Measured on judged questions over real sites (bench/assistant.ts).
 */
const K1 = 1.2;
const B = 0.75;

/** A question word: the index terms it matches (itself, its other forms) and their idf among sections. */
export interface SectionWord {
  terms: readonly string[];
  idf: number;
}

export interface PassageCandidate {
  id: number;
  title: string;
  sections: readonly PageSection[];
  /** The page's preference (language, version) the score is multiplied by. */
  weight: number;
}

export interface RankedPage {
  id: number;
  section: PageSection;
  score: number;
}

/** `terms` as whole words (between `word`'s negation), and `loose` terms anywhere; a pattern that never matches when there is neither. */
function pattern(terms: readonly string[], word: string, loose: readonly string[], flags: string): RegExp {
  // no empty alternative: it would cost the scan its quick search for the terms' letters (several times slower)
  const parts = [...(terms.length ? [`(?<!${word})(?:${terms.map(escapeRegExp).join('|')})(?!${word})`] : []), ...loose.map(escapeRegExp)];
  return new RegExp(parts.join('|') || '(?!)', flags);
}

/**
 * Adds `text`'s occurrences of each word's terms (whole words, as the tokenizer cuts them; a CJK
 * term also inside a word) to `tf`, weighted by `w`; answers its weighted length in characters
 * (the sections' mean is in characters too: a length, not a word count, is all BM25 needs, and it
 * costs no pass over the text). One regular expression of all the terms per text: an ASCII text is
 * matched as it is, ignoring case; another is lower-cased and NFKC-normalised first, as indexed.
 */
function counter(words: readonly SectionWord[], tf: Float64Array): (text: string, w: number) => number {
  const wordOf = new Map<string, number>();
  words.forEach((word, i) => word.terms.forEach((t) => wordOf.set(t, i)));
  const terms = [...wordOf.keys()].sort((a, b) => b.length - a.length);
  const ascii = pattern(
    terms.filter((t) => ASCII.test(t)),
    '[a-z0-9_]',
    [],
    'gi',
  );
  const other = pattern(
    terms.filter((t) => !isCjk(t)),
    '[\\p{L}\\p{M}\\p{N}_]',
    terms.filter(isCjk),
    'gu',
  );
  return (text, w) => {
    const plain = ASCII.test(text);
    const re = plain ? ascii : other;
    const s = plain ? text : asIndexed(text);
    re.lastIndex = 0;
    for (let m = re.exec(s); m !== null; m = re.exec(s)) {
      const i = wordOf.get(plain ? m[0].toLowerCase() : m[0]);
      if (i !== undefined) tf[i]! += w;
    }
    return w * text.length;
  };
}

/** Candidates ordered by their best section's score (best first; the candidates' order on a tie); pages no word is in are dropped. */
export function rankByPassage(candidates: readonly PassageCandidate[], words: readonly SectionWord[], avgSectionLen: number): RankedPage[] {
  const tf = new Float64Array(words.length);
  const count = counter(words, tf);
  const out: Array<RankedPage & { at: number }> = [];
  candidates.forEach((c, at) => {
    let best: RankedPage | null = null;
    for (const section of c.sections) {
      tf.fill(0);
      const len = count(c.title, 1) + count(section.heading, 2) + count(section.text, 1);
      let score = 0;
      words.forEach((w, i) => {
        const f = tf[i]!;
        if (f > 0) score += (w.idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * len) / avgSectionLen));
      });
      if (score > 0 && (best === null || score > best.score)) best = { id: c.id, section, score };
    }
    if (best) out.push({ ...best, score: best.score * c.weight, at });
  });
  return out.sort((a, b) => b.score - a.score || a.at - b.at).map(({ id, section, score }) => ({ id, section, score }));
}
