/** Typo tolerance for local search: the bounded edit distance both the index and the ranking use. */

let rowA = new Int32Array(64);
let rowB = new Int32Array(64);

/** Levenshtein distance of a and b is at most d (two reused rows, early exit when a row exceeds d). */
export function within(a: string, b: string, d: number): boolean {
  if (Math.abs(a.length - b.length) > d) return false;
  const m = b.length;
  if (rowA.length <= m) {
    rowA = new Int32Array(m + 1);
    rowB = new Int32Array(m + 1);
  }
  let prev = rowA;
  let cur = rowB;
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let best = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ca === b.charCodeAt(j - 1) ? 0 : 1));
      cur[j] = v;
      if (v < best) best = v;
    }
    if (best > d) return false;
    const t = prev;
    prev = cur;
    cur = t;
  }
  return prev[m]! <= d;
}
