/**
 * `Range: bytes=...` (RFC 9110 §14.1.2, §14.2) over a representation of `size` bytes (pure).
 * One range only: a multi-range request is answered 200 with the whole file, which §14.2 allows
 * ("a server MAY ignore the Range header field") and which spares us multipart/byteranges and
 * its overlapping-ranges amplification (RFC 9110 §17.15). A header we cannot parse is ignored (200),
 * as §14.2 requires; a well-formed range that lies wholly past the end is unsatisfiable (416).
 */
export type RangeResult = { kind: 'none' } | { kind: 'unsatisfiable' } | { kind: 'range'; start: number; end: number };

const NONE: RangeResult = { kind: 'none' };
const SPEC = /^\s*(\d*)\s*-\s*(\d*)\s*$/;

export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined || header.length > 256) return NONE;
  const eq = header.indexOf('=');
  if (eq === -1 || header.slice(0, eq).trim().toLowerCase() !== 'bytes') return NONE;
  const specs = header.slice(eq + 1).split(',');
  if (specs.length !== 1) return NONE;
  const m = SPEC.exec(specs[0]!);
  if (!m) return NONE;
  const [, a, b] = m as unknown as [string, string, string];
  if (a === '' && b === '') return NONE;
  if (a.length > 15 || b.length > 15) return NONE; // beyond Number precision: not a range we can honour
  if (a === '') {
    // suffix range: the last n bytes
    const n = Number(b);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  if (b !== '' && Number(b) < start) return NONE; // invalid range-spec: ignore the header (§14.1.1)
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', start, end: b === '' ? size - 1 : Math.min(Number(b), size - 1) };
}
