/**
 * Human sizes, in binary units everywhere (what `ls -lh`, `du -h` and curl print): 512 B,
 * 17.4 KiB, 3.0 MiB, 1.2 GiB. Never rounds a small size to "0".
 */
export function fmtBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

/** What a progress line counts. */
export type Unit = 'bytes' | 'files' | 'percent';

/** "3.2 MiB of 10.0 MiB (32%)", "4 of 9 files (44%)", "50%": how far a step is, in words. */
export function amount(done: number, total: number | undefined, unit: Unit): string {
  const pct = total ? ` (${Math.floor((100 * Math.min(done, total)) / total)}%)` : '';
  if (unit === 'percent') return `${Math.floor(done)}%`;
  if (unit === 'files') return total === undefined ? `${done} files` : `${done} of ${total} files${pct}`;
  return total === undefined ? fmtBytes(done) : `${fmtBytes(done)} of ${fmtBytes(total)}${pct}`;
}
