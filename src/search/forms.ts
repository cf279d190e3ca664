import { stemmer } from 'stemmer';

/**
 * A word's other English forms (`streams` for `stream`, `inserted` for `insert`, `entries` for
 * `entry`): words with the same Porter stem. Only the local assistant's questions use them; in
 * the reader's search box a word means what was typed. Lower-case ASCII words of 3 letters or
 * more only: a stemmer of English says nothing about identifiers with digits or other scripts.
 */
const ENGLISH_WORD = /^[a-z]{3,}$/;
/** How many index terms are looked at for one word's forms. */
const MAX_SCAN = 4000;

export const stemOf = (word: string): string | null => (ENGLISH_WORD.test(word) ? stemmer(word) : null);

/**
 * Indexes of the sorted `terms` that are other forms of `word`: found among the terms that start
 * like its stem less the stem's last letter (which a form may change: `entri`, `entry`).
 * `lower(t)` is the index of the first term ≥ t.
 */
export function formsIn(terms: readonly string[], lower: (t: string) => number, word: string): number[] {
  const stem = stemOf(word);
  if (stem === null) return [];
  const start = stem.slice(0, Math.max(3, stem.length - 1));
  const out: number[] = [];
  for (let i = lower(start), k = 0; i < terms.length && k < MAX_SCAN && terms[i]!.startsWith(start); i++, k++)
    if (terms[i] !== word && stemmer(terms[i]!) === stem) out.push(i);
  return out;
}
