import { isCjk, queryTokens, tokenize } from './tokenize.js';
import { within } from './typo.js';
import { formsIn } from './forms.js';

/**
 * A compact inverted index (local search): terms sorted (prefix = a binary-searched range), postings
 * in flat typed arrays (CSR: `offsets[t]..offsets[t+1]` into `docs`/`tfs`), BM25 over one
 * weighted term frequency per page (title ×4, headings ×2, file name ×2, text ×1). Built because MiniSearch,
 * measured on 10,000 pages (bench/search.ts), needs ~100 bytes per posting in nested Maps, a
 * minute to build and 300 ms for a common word; here a posting is 6 bytes and a common word is one
 * pass over a typed array. Typo tolerance: bounded Levenshtein (1 edit up to 7 letters, 2 above)
 * over the terms of similar length, only when exact/prefix matching finds too little.
 */
export interface CoreHit {
  id: number;
  score: number;
}
export interface CoreQuery {
  terms: string[];
  hits: CoreHit[];
}

const BM25 = { k1: 1.2, b: 0.7 } as const; // term-frequency saturation (k1) and length normalisation (b)
const MAX_PREFIX_TERMS = 200;
const MAX_TF = 65535;
/** Weights of a prefix completion and of a typo neighbour against the exact word (1). */
const PREFIX_W = 0.7;
const FUZZY_W = 0.5;
/** Weight of another English form of the word (forms.ts). */
const FORM_W = 0.9;

class Grow32 {
  a = new Uint32Array(1 << 16);
  n = 0;
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Uint32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
}

export class CompactCore {
  // build state (dropped by finish)
  private termIds: Map<string, number> | null = new Map();
  private buildTerms: string[] = [];
  private pTerm = new Grow32();
  private pDoc = new Grow32();
  private pTf = new Grow32();
  private lens = new Grow32();
  private tf = new Uint32Array(1 << 16);
  private seen: number[] = [];
  // final state
  terms: string[] = [];
  offsets = new Uint32Array(1);
  docs = new Uint32Array(0);
  tfs = new Uint16Array(0);
  docLen = new Uint32Array(0);
  avgLen = 1;

  get docCount(): number {
    return this.termIds ? this.lens.n : this.docLen.length;
  }

  add(fields: { title: string; headings: string; text: string; name?: string }): number {
    if (!this.termIds) throw new Error('index is finished');
    const id = this.lens.n;
    // Per-page term frequencies in a reused array indexed by term id (no Map per page).
    const seen = this.seen;
    let len = 0;
    const weighted = [[fields.title, 4], [fields.headings, 2], [fields.text, 1], [fields.name ?? '', 2]] as const; // prettier-ignore
    for (const [text, w] of weighted) {
      for (const t of tokenize(text)) {
        let tid = this.termIds.get(t);
        if (tid === undefined) {
          tid = this.buildTerms.push(t) - 1;
          this.termIds.set(t, tid);
          if (tid >= this.tf.length) {
            const grown = new Uint32Array(this.tf.length * 2);
            grown.set(this.tf);
            this.tf = grown;
          }
        }
        if (this.tf[tid] === 0) seen.push(tid);
        this.tf[tid]! += w;
        len += w;
      }
    }
    for (const tid of seen) {
      this.pTerm.push(tid);
      this.pDoc.push(id);
      this.pTf.push(Math.min(this.tf[tid]!, MAX_TF));
      this.tf[tid] = 0;
    }
    seen.length = 0;
    this.lens.push(len);
    return id;
  }

  /** Turn the build buffers into the sorted, compact form (idempotent). */
  finish(): void {
    if (!this.termIds) return;
    const order = this.buildTerms.map((_, i) => i).sort((a, b) => (this.buildTerms[a]! < this.buildTerms[b]! ? -1 : 1));
    const rank = new Uint32Array(order.length);
    order.forEach((tid, r) => (rank[tid] = r));
    const n = this.pTerm.n;
    const offsets = new Uint32Array(order.length + 1);
    for (let i = 0; i < n; i++) offsets[rank[this.pTerm.a[i]!]! + 1]!++;
    for (let t = 0; t < order.length; t++) offsets[t + 1]! += offsets[t]!;
    const fill = offsets.slice(0, order.length);
    const docs = new Uint32Array(n);
    const tfs = new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      const at = fill[rank[this.pTerm.a[i]!]!]!++;
      docs[at] = this.pDoc.a[i]!;
      tfs[at] = this.pTf.a[i]!;
    }
    this.terms = order.map((tid) => this.buildTerms[tid]!);
    this.offsets = offsets;
    this.docs = docs;
    this.tfs = tfs;
    this.docLen = this.lens.a.slice(0, this.lens.n);
    let total = 0;
    for (const l of this.docLen) total += l;
    this.avgLen = this.docLen.length ? Math.max(1, total / this.docLen.length) : 1;
    this.termIds = null;
    this.buildTerms = [];
    this.pTerm = this.pDoc = this.pTf = this.lens = new Grow32();
    this.tf = new Uint32Array(0);
  }

  /** Index of the first term >= t. */
  private lower(t: string): number {
    let lo = 0;
    let hi = this.terms.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.terms[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private expand(tok: string, prefix: boolean, fuzzy: boolean, forms: boolean): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    const at = this.lower(tok);
    if (this.terms[at] === tok) out.push([at, 1]);
    if (prefix)
      for (let i = at, k = 0; i < this.terms.length && k < MAX_PREFIX_TERMS && this.terms[i]!.startsWith(tok); i++, k++)
        if (this.terms[i] !== tok) out.push([i, PREFIX_W]);
    if (forms) for (const i of formsIn(this.terms, (t) => this.lower(t), tok)) if (!out.some(([t]) => t === i)) out.push([i, FORM_W]);
    if (fuzzy && !isCjk(tok) && tok.length >= 4) {
      // only terms with the same first letter (a contiguous range of the sorted terms: typos in
      // the first letter are rare, and this is 1/26th of the work) and a length within d
      const d = tok.length < 8 ? 1 : 2;
      const first = tok[0]!;
      for (let i = this.lower(first), end = this.lower(first + '\uffff'); i < end; i++) {
        const t = this.terms[i]!;
        if (Math.abs(t.length - tok.length) > d || t === tok) continue;
        if (within(tok, t, d)) out.push([i, FUZZY_W]);
      }
    }
    return out;
  }

  /** `forms`: each word also matches its other English forms (forms.ts). */
  search(query: string, o: { fuzzy: boolean; and: boolean; forms?: boolean; filter?: (id: number) => boolean }): CoreQuery {
    this.finish();
    const toks = [...new Set(queryTokens(query))].slice(0, 12);
    const N = this.docLen.length;
    if (toks.length === 0 || N === 0) return { terms: [], hits: [] };
    const scores = new Float64Array(N);
    const mask = new Uint32Array(N);
    const touched: number[] = [];
    const matched: string[] = [];
    // One token's expansions (exact, prefixes, forms, typo neighbours): a page counts the best of them,
    // not their sum, and a prefix completion is never rarer than the exact word and completions
    // together (else a rare completion would outweigh the word the reader typed). A typo
    // neighbour keeps its own rarity: the rarer neighbour is the likelier meant word on a docs site.
    const best = new Float64Array(N);
    toks.forEach((tok, i) => {
      const last = i === toks.length - 1;
      const exp = this.expand(tok, last && (tok.length >= 2 || isCjk(tok)), o.fuzzy, o.forms === true);
      let groupDf = 0;
      for (const [t, w] of exp) if (w !== FUZZY_W) groupDf += this.offsets[t + 1]! - this.offsets[t]!;
      const groupIdf = Math.log(1 + (N - Math.min(N, groupDf) + 0.5) / (Math.min(N, groupDf) + 0.5));
      const hit: number[] = [];
      const single = exp.length === 1;
      for (const [t, w] of exp) {
        matched.push(this.terms[t]!);
        const from = this.offsets[t]!;
        const to = this.offsets[t + 1]!;
        const own = Math.log(1 + (N - (to - from) + 0.5) / (to - from + 0.5));
        const idf = w === PREFIX_W || w === FORM_W ? Math.min(own, groupIdf) : own;
        const { k1, b } = BM25;
        for (let p = from; p < to; p++) {
          const doc = this.docs[p]!;
          const tf = this.tfs[p]!;
          if (mask[doc] === 0) touched.push(doc);
          mask[doc] = mask[doc]! | (1 << i);
          const v = (w * idf * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * this.docLen[doc]!) / this.avgLen));
          if (single)
            scores[doc] = scores[doc]! + v; // one expansion: nothing to take the best of
          else {
            if (best[doc] === 0) hit.push(doc);
            if (v > best[doc]!) best[doc] = v;
          }
        }
      }
      for (const doc of hit) {
        scores[doc] = scores[doc]! + best[doc]!;
        best[doc] = 0;
      }
    });
    const all = toks.length >= 32 ? 0xffffffff : (1 << toks.length) - 1;
    const hits: CoreHit[] = [];
    for (const doc of touched) {
      if (o.and && mask[doc] !== all) continue;
      if (o.filter && !o.filter(doc)) continue;
      // OR: pages with more of the words first
      hits.push({ id: doc, score: o.and ? scores[doc]! : scores[doc]! * (popcount(mask[doc]!) / toks.length) });
    }
    hits.sort((a, b) => b.score - a.score || a.id - b.id);
    return { terms: [...new Set(matched)], hits };
  }

  *serializeLines(): Generator<string> {
    this.finish();
    yield JSON.stringify({ docs: this.docLen.length, terms: this.terms.length, postings: this.docs.length, avgLen: this.avgLen });
    for (let i = 0; i < this.terms.length; i += 50_000) yield JSON.stringify(this.terms.slice(i, i + 50_000));
    for (const [k, arr] of [
      ['offsets', this.offsets],
      ['docs', this.docs],
      ['tfs', this.tfs],
      ['docLen', this.docLen],
    ] as const) {
      const bytes = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
      for (let i = 0; i < bytes.length || i === 0; i += 6 << 20) yield JSON.stringify({ k, b: bytes.subarray(i, i + (6 << 20)).toString('base64') });
    }
  }

  /** Throws on anything inconsistent (the caller rebuilds). */
  static deserialize(lines: readonly string[]): CompactCore {
    const head = JSON.parse(lines[0] ?? 'null') as { docs?: unknown; terms?: unknown; postings?: unknown; avgLen?: unknown } | null;
    const int = (v: unknown) => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : NaN);
    const nDocs = int(head?.docs);
    const nTerms = int(head?.terms);
    const nPost = int(head?.postings);
    if (!head || Number.isNaN(nDocs + nTerms + nPost) || typeof head.avgLen !== 'number' || !(head.avgLen > 0)) throw new Error('bad index header');
    const c = new CompactCore();
    c.termIds = null;
    let i = 1;
    const terms: string[] = [];
    while (terms.length < nTerms) {
      const part = JSON.parse(lines[i++] ?? 'null') as unknown;
      if (!Array.isArray(part) || part.length === 0) throw new Error('bad term list');
      for (const t of part) {
        if (typeof t !== 'string') throw new Error('bad term');
        terms.push(t);
      }
    }
    if (terms.length !== nTerms) throw new Error('term count mismatch');
    for (let k = 1; k < terms.length; k++) if (!(terms[k - 1]! < terms[k]!)) throw new Error('terms not sorted');
    const parts: Record<string, Buffer[]> = { offsets: [], docs: [], tfs: [], docLen: [] };
    for (; i < lines.length; i++) {
      const v = JSON.parse(lines[i]!) as { k?: unknown; b?: unknown };
      if (typeof v?.k !== 'string' || !(v.k in parts) || typeof v.b !== 'string') throw new Error('bad array line');
      parts[v.k]!.push(Buffer.from(v.b, 'base64'));
    }
    const u32 = (name: string, n: number) => {
      const b = Buffer.concat(parts[name]!);
      if (b.length !== n * 4) throw new Error(`${name}: ${b.length} bytes, expected ${n * 4}`);
      const a = new Uint32Array(n);
      Buffer.from(a.buffer).set(b);
      return a;
    };
    c.offsets = u32('offsets', nTerms + 1);
    c.docs = u32('docs', nPost);
    c.docLen = u32('docLen', nDocs);
    const tb = Buffer.concat(parts.tfs!);
    if (tb.length !== nPost * 2) throw new Error('tfs size mismatch');
    c.tfs = new Uint16Array(nPost);
    Buffer.from(c.tfs.buffer).set(tb);
    if (c.offsets[0] !== 0 || c.offsets[nTerms] !== nPost) throw new Error('offsets do not span the postings');
    for (let t = 0; t < nTerms; t++) if (c.offsets[t]! > c.offsets[t + 1]!) throw new Error('offsets not ascending');
    for (const d of c.docs) if (d >= nDocs) throw new Error('posting names a page that does not exist');
    c.terms = terms;
    c.avgLen = head.avgLen;
    return c;
  }
}

function popcount(x: number): number {
  let n = 0;
  for (; x; x &= x - 1) n++;
  return n;
}
