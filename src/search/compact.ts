import { isCjk, queryTokens, tokenize } from './tokenize.js';
import { within } from './typo.js';
import { formsIn } from './forms.js';
import { Grow32 } from './grow32.js';

/**
 * A compact inverted index (local search): terms sorted (prefix = a binary-searched range), postings
 * in flat typed arrays (CSR: `offsets[t]..offsets[t+1]` into `docs`/`tfs`), BM25 over one
 * weighted term frequency per page (title ×4, headings ×2, file name ×2, text ×1). Built because MiniSearch,
 * measured on 10,000 pages (bench/search.ts), needs ~100 bytes per posting in nested Maps, a
 * minute to build and 300 ms for a common word; here a posting is 6 bytes and a common word is one
 * pass over a typed array. Typo tolerance: bounded Levenshtein (1 edit up to 7 letters, 2 above)
 * over the terms of similar length, only when exact/prefix matching finds too little.
 * Beside the pages, the SECTIONS' statistics (how many sections hold each term, their count and
 * mean length): what passages.ts needs to rank the sections of a question's candidate pages.
 * Serialised by compact-lines.ts.
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

export class CompactCore {
  // build state (dropped by finish)
  private termIds: Map<string, number> | null = new Map();
  private buildTerms: string[] = [];
  private pTerm = new Grow32();
  private pDoc = new Grow32();
  private pTf = new Grow32();
  private lens = new Grow32();
  private tf = new Uint32Array(1 << 10);
  private seen: number[] = [];
  private secDf = new Grow32();
  private secMark = new Grow32();
  private secTotal = 0;
  // final state
  terms: string[] = [];
  offsets = new Uint32Array(1);
  docs = new Uint32Array(0);
  tfs = new Uint16Array(0);
  docLen = new Uint32Array(0);
  avgLen = 1;
  /** Per term (aligned with `terms`): how many sections hold it. */
  sectionDf = new Uint32Array(0);
  sections = 0;
  /** Mean section length in characters (the page's title once, the heading twice, the text): passages.ts. */
  avgSectionLen = 1;

  /** A finished core from its arrays (compact-lines.ts, which checks them). */
  static of(parts: Pick<CompactCore, 'terms' | 'offsets' | 'docs' | 'tfs' | 'docLen' | 'avgLen' | 'sectionDf' | 'sections' | 'avgSectionLen'>): CompactCore {
    const c = new CompactCore();
    c.dropBuild();
    return Object.assign(c, parts);
  }

  /** A finished core keeps nothing of its build (a loaded index would hold ~2 MB of empty buffers). */
  private dropBuild(): void {
    this.termIds = null;
    this.buildTerms = [];
    this.pTerm = this.pDoc = this.pTf = this.lens = this.secDf = this.secMark = Grow32.EMPTY;
    this.tf = new Uint32Array(0);
  }

  get docCount(): number {
    return this.termIds ? this.lens.n : this.docLen.length;
  }

  /** One page: its title, file name and sections (each heading and text). */
  add(fields: { title: string; name?: string; sections: ReadonlyArray<{ heading: string; text: string }> }): number {
    if (!this.termIds) throw new Error('index is finished');
    const id = this.lens.n;
    // Per-page term frequencies in a reused array indexed by term id (no Map per page).
    const seen = this.seen;
    const title = this.ids(tokenize(fields.title));
    let len = 0;
    const count = (tids: readonly number[], w: number) => {
      for (const tid of tids) {
        if (this.tf[tid] === 0) seen.push(tid);
        this.tf[tid]! += w;
        len += w;
      }
    };
    count(title, 4);
    count(this.ids(tokenize(fields.name ?? '')), 2);
    for (const sec of fields.sections) {
      const heading = this.ids(tokenize(sec.heading));
      const text = this.ids(tokenize(sec.text));
      count(heading, 2);
      count(text, 1);
      // the section's own statistics: each term once, whatever its count
      const mark = ++this.sections;
      for (const part of [title, heading, text])
        for (const tid of part)
          if (this.secMark.a[tid] !== mark) {
            this.secMark.a[tid] = mark;
            this.secDf.a[tid]!++;
          }
      this.secTotal += fields.title.length + 2 * sec.heading.length + sec.text.length;
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

  /** Term ids of tokens, new terms added (with room in every per-term build array). */
  private ids(tokens: readonly string[]): number[] {
    return tokens.map((t) => {
      let tid = this.termIds!.get(t);
      if (tid === undefined) {
        tid = this.buildTerms.push(t) - 1;
        this.termIds!.set(t, tid);
        if (tid >= this.tf.length) {
          const grown = new Uint32Array(this.tf.length * 2);
          grown.set(this.tf);
          this.tf = grown;
        }
        this.secDf.push(0);
        this.secMark.push(0);
      }
      return tid;
    });
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
    this.sectionDf = Uint32Array.from(order, (tid) => this.secDf.a[tid]!);
    this.avgSectionLen = this.sections ? Math.max(1, this.secTotal / this.sections) : 1;
    this.dropBuild();
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
    // neighbour keeps its own rarity (the rarer neighbour is the likelier meant word on a docs
    // site), but is never rarer than the word as typed when the site has that word.
    const best = new Float64Array(N);
    const idfOf = (df: number) => Math.log(1 + (N - Math.min(N, df) + 0.5) / (Math.min(N, df) + 0.5));
    toks.forEach((tok, i) => {
      const last = i === toks.length - 1;
      const exp = this.expand(tok, last && (tok.length >= 2 || isCjk(tok)), o.fuzzy, o.forms === true);
      let groupDf = 0;
      for (const [t, w] of exp) if (w !== FUZZY_W) groupDf += this.offsets[t + 1]! - this.offsets[t]!;
      const groupIdf = idfOf(groupDf);
      const hit: number[] = [];
      const single = exp.length === 1;
      const typedIdf = exp[0]?.[1] === 1 ? idfOf(this.offsets[exp[0][0] + 1]! - this.offsets[exp[0][0]]!) : null;
      for (const [t, w] of exp) {
        matched.push(this.terms[t]!);
        const from = this.offsets[t]!;
        const to = this.offsets[t + 1]!;
        const own = idfOf(to - from);
        const idf = w === PREFIX_W || w === FORM_W ? Math.min(own, groupIdf) : w === FUZZY_W && typedIdf !== null ? Math.min(own, typedIdf) : own;
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

  /**
   * A question word as the sections see it: the terms it matches (itself and its other English
   * forms) and their rarity among sections (BM25 idf over the sections holding any of them, counted
   * once per term: a section with two forms counts twice, a small overestimate of how common it is).
   */
  sectionWord(tok: string): { terms: string[]; idf: number } {
    this.finish();
    const exp = this.expand(tok, false, false, true);
    let df = 0;
    for (const [t] of exp) df += this.sectionDf[t]!;
    df = Math.min(df, this.sections);
    return { terms: exp.map(([t]) => this.terms[t]!), idf: Math.log(1 + (this.sections - df + 0.5) / (df + 0.5)) };
  }
}

function popcount(x: number): number {
  let n = 0;
  for (; x; x &= x - 1) n++;
  return n;
}
