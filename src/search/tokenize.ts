/**
 * Words for the search index and for queries. Runs of letters and digits are words; a run in a
 * script written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) is cut into words
 * with `Intl.Segmenter` (ICU's dictionary word boundaries). Only those runs go through the
 * segmenter: it is ~50x slower than a regular expression on Latin text (bench/search.ts), and
 * a space-separated script needs no dictionary. Lower-cased and NFKC-normalised (full-width Latin
 * matches ASCII). Han/Kana/Hangul words are also indexed by their characters and character pairs:
 * the dictionary's cuts do not always match a reader's query, and bigrams let a two-character
 * query find a longer word.
 */
const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });
const RUN = /[\p{L}\p{M}\p{N}_]+/gu;
const NEEDS_SEGMENTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
/** The longest token kept (longer "words" are hashes, base64 or minified code, not words). */
export const MAX_TOKEN = 40;

// eslint-disable-next-line no-control-regex -- "every character is ASCII", control characters included
export const ASCII = /^[\x00-\x7f]*$/;
/** A character from U+0E00 on (Thai, Lao, Myanmar, Khmer, Hangul, Kana, Han all are): a plain class, far cheaper to test than script properties. */
// eslint-disable-next-line no-control-regex -- the range starts at U+0000
const FROM_THAI = /[^\u0000-\u0dff]/;
const ASCII_SEP = /[^a-z0-9_]+/;

function words(text: string, each: (w: string) => void): void {
  if (ASCII.test(text)) {
    // The common case, ~3x faster than the Unicode-aware path below.
    for (const w of text.toLowerCase().split(ASCII_SEP)) if (w !== '' && w.length <= MAX_TOKEN) each(w);
    return;
  }
  const norm = text.normalize('NFKC').toLowerCase();
  for (const m of norm.matchAll(RUN)) {
    const run = m[0];
    if (!FROM_THAI.test(run) || !NEEDS_SEGMENTER.test(run)) {
      if (run.length <= MAX_TOKEN) each(run);
      continue;
    }
    for (const s of segmenter.segment(run)) if (s.isWordLike && s.segment.length <= MAX_TOKEN) each(s.segment);
  }
}

export function tokenize(text: string): string[] {
  const out: string[] = [];
  words(text, (w) => {
    out.push(w);
    if (w.length > 1 && FROM_THAI.test(w) && CJK.test(w)) {
      const chars = [...w];
      for (let i = 0; i < chars.length; i++) {
        out.push(chars[i]!);
        if (i + 1 < chars.length && chars.length > 2) out.push(chars[i]! + chars[i + 1]!);
      }
    }
  });
  return out;
}

/** Query words: the same cuts, without the CJK expansion (a query word is matched by prefix). */
export function queryTokens(query: string): string[] {
  const out: string[] = [];
  words(query, (w) => out.push(w));
  return out;
}

export function isCjk(term: string): boolean {
  return CJK.test(term);
}
