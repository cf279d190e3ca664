import { CompactCore } from './compact.js';
import { MAX_HEADING, MAX_PAGE_TEXT, MAX_SECTIONS } from './extract.js';
import { MAX_TOKEN } from './tokenize.js';

/**
 * The core as JSON lines for the search cache file (cache-file.ts): a header, the terms in batches,
 * then each typed array in base64 chunks, so no single string holds the whole index. Reading it
 * back trusts nothing: every count, order and reference is checked, and anything inconsistent
 * throws (the caller rebuilds the index).
 */
const ARRAYS = ['offsets', 'docs', 'tfs', 'docLen', 'sectionDf'] as const;
/** Bounds no index built from pages can pass (extraction's: a page's text, its headings, 3 tokens a CJK character). */
const MAX_DOC_LEN = 1 << 24;
const MAX_SECTION_CHARS = MAX_HEADING * 3 + MAX_PAGE_TEXT;

export function* coreLines(c: CompactCore): Generator<string> {
  c.finish();
  yield JSON.stringify({
    docs: c.docLen.length,
    terms: c.terms.length,
    postings: c.docs.length,
    avgLen: c.avgLen,
    sections: c.sections,
    avgSectionLen: c.avgSectionLen,
  });
  for (let i = 0; i < c.terms.length; i += 50_000) yield JSON.stringify(c.terms.slice(i, i + 50_000));
  for (const k of ARRAYS) {
    const arr = c[k];
    const bytes = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
    for (let i = 0; i < bytes.length || i === 0; i += 6 << 20) yield JSON.stringify({ k, b: bytes.subarray(i, i + (6 << 20)).toString('base64') });
  }
}

/** A line of the file as JSON, or an error naming what it held (not the parser's words). */
export function parseLine(line: string, what: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`${what} is not JSON`);
  }
}

export function coreFromLines(lines: readonly string[]): CompactCore {
  const head = parseLine(lines[0] ?? 'null', 'the index header') as Record<string, unknown> | null;
  const int = (v: unknown) => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : NaN);
  const nDocs = int(head?.docs);
  const nTerms = int(head?.terms);
  const nPost = int(head?.postings);
  const nSections = int(head?.sections);
  const positive = (v: unknown) => typeof v === 'number' && v > 0 && Number.isFinite(v);
  if (!head || Number.isNaN(nDocs + nTerms + nPost + nSections) || !positive(head.avgLen) || !positive(head.avgSectionLen)) throw new Error('bad index header');
  if (nSections > nDocs * (MAX_SECTIONS + 1) || (head.avgSectionLen as number) > MAX_SECTION_CHARS) throw new Error('bad index header');
  let i = 1;
  const terms: string[] = [];
  while (terms.length < nTerms) {
    const part = parseLine(lines[i++] ?? 'null', 'a line of terms');
    if (!Array.isArray(part) || part.length === 0) throw new Error('bad term list');
    for (const t of part) {
      if (typeof t !== 'string' || t.length === 0 || t.length > MAX_TOKEN) throw new Error('bad term');
      terms.push(t);
    }
  }
  if (terms.length !== nTerms) throw new Error('term count mismatch');
  for (let k = 1; k < terms.length; k++) if (!(terms[k - 1]! < terms[k]!)) throw new Error('terms not sorted');
  const parts: Record<string, Buffer[]> = Object.fromEntries(ARRAYS.map((k) => [k, []]));
  for (; i < lines.length; i++) {
    const v = parseLine(lines[i]!, 'a line of the index arrays') as { k?: unknown; b?: unknown };
    if (typeof v?.k !== 'string' || !(v.k in parts) || typeof v.b !== 'string') throw new Error('bad array line');
    parts[v.k]!.push(Buffer.from(v.b, 'base64'));
  }
  const typed = <T extends Uint32Array | Uint16Array>(name: string, n: number, make: (n: number) => T): T => {
    const b = Buffer.concat(parts[name]!);
    const a = make(n);
    if (b.length !== a.byteLength) throw new Error(`${name}: ${b.length} bytes, expected ${a.byteLength}`);
    Buffer.from(a.buffer).set(b);
    return a;
  };
  const u32 = (n: number) => new Uint32Array(n);
  const offsets = typed('offsets', nTerms + 1, u32);
  const docs = typed('docs', nPost, u32);
  const docLen = typed('docLen', nDocs, u32);
  const tfs = typed('tfs', nPost, (n) => new Uint16Array(n));
  const sectionDf = typed('sectionDf', nTerms, u32);
  if (offsets[0] !== 0 || offsets[nTerms] !== nPost) throw new Error('offsets do not span the postings');
  let total = 0;
  for (const n of docLen) {
    if (n > MAX_DOC_LEN) throw new Error('a page is longer than any page can be');
    total += n;
  }
  // the mean length is what the lengths say it is
  if (Math.abs(Math.max(1, nDocs ? total / nDocs : 1) - (head.avgLen as number)) > 1e-9 * (head.avgLen as number)) throw new Error('bad index header');
  for (let t = 0; t < nTerms; t++) {
    if (offsets[t]! > offsets[t + 1]!) throw new Error('offsets not ascending');
    for (let p = offsets[t]!; p < offsets[t + 1]!; p++) {
      const d = docs[p]!;
      if (d >= nDocs) throw new Error('posting names a page that does not exist');
      if (p > offsets[t]! && d <= docs[p - 1]!) throw new Error("a term's postings are not in page order");
      // a page holds a term at least once, and no more often than its length
      if (tfs[p] === 0 || tfs[p]! > docLen[d]!) throw new Error('a posting counts a term impossibly often');
    }
  }
  for (const n of sectionDf) if (n > nSections) throw new Error('a term is in more sections than there are');
  return CompactCore.of({
    terms,
    offsets,
    docs,
    tfs,
    docLen,
    avgLen: head.avgLen as number,
    sectionDf,
    sections: nSections,
    avgSectionLen: head.avgSectionLen as number,
  });
}
