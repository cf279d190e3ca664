/**
 * Human sizes, in binary units everywhere (what `ls -lh`, `du -h` and curl print): 512 B,
 * 17.4 KiB, 3.0 MiB, 1.2 GiB. Never rounds a small size to "0".
 */
export function fmtBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}
