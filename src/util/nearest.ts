/** The known name closest to a mistyped one (at most 2 edits away), for "did you mean"; pure. */
export function nearest(typed: string, known: readonly string[]): string | null {
  const distance = (a: string, b: string): number => {
    let row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row = next;
    }
    return row[b.length]!;
  };
  let best: string | null = null;
  let bestD = 3;
  for (const k of known) {
    const d = distance(typed.toLowerCase(), k);
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best;
}
