/**
 * Conditional requests (RFC 9110 §13), pure. Evaluation order per §13.2.2:
 * If-Match, If-Unmodified-Since (412), then If-None-Match, If-Modified-Since (304 for GET/HEAD).
 * If-Modified-Since is only looked at when If-None-Match is absent (§13.1.3).
 */
export type Precondition = 'ok' | 'not-modified' | 'failed';

/** Entity tags in a list header; `*` is returned as is. Malformed members are skipped. */
function tags(header: string): string[] {
  const out: string[] = [];
  for (const part of header.split(',')) {
    const t = part.trim();
    if (t) out.push(t);
  }
  return out;
}

/** Weak comparison (§8.8.3.2): opaque tags equal, W/ ignored. */
export function weakMatch(header: string, etag: string): boolean {
  const bare = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const t of tags(header)) {
    if (t === '*' || (t.startsWith('W/') ? t.slice(2) : t) === bare) return true;
  }
  return false;
}

/** Strong comparison (§8.8.3.2): both strong and equal. */
export function strongMatch(header: string, etag: string): boolean {
  for (const t of tags(header)) if (t === '*' || (t === etag && !t.startsWith('W/'))) return true;
  return false;
}

/** An HTTP-date in seconds, or NaN when malformed (then the condition is ignored, §13.1.3/§13.1.4). */
export function httpDateSeconds(v: string | undefined): number {
  if (v === undefined || v.length > 64) return NaN;
  return Math.floor(Date.parse(v) / 1000);
}

export interface Validators {
  etag: string;
  lastModifiedSec: number;
}

export function evaluate(
  h: { 'if-match'?: string; 'if-unmodified-since'?: string; 'if-none-match'?: string; 'if-modified-since'?: string },
  v: Validators,
): Precondition {
  const im = h['if-match'];
  if (im !== undefined) {
    if (!strongMatch(im, v.etag)) return 'failed';
  } else {
    const ius = httpDateSeconds(h['if-unmodified-since']);
    if (!Number.isNaN(ius) && v.lastModifiedSec > ius) return 'failed';
  }
  const inm = h['if-none-match'];
  if (inm !== undefined) return weakMatch(inm, v.etag) ? 'not-modified' : 'ok';
  const ims = httpDateSeconds(h['if-modified-since']);
  if (!Number.isNaN(ims) && v.lastModifiedSec <= ims) return 'not-modified';
  return 'ok';
}

/** If-Range (§13.1.5): honour Range only if the validator still matches (strong ETag or exact date). */
export function ifRangeHolds(ifRange: string | undefined, v: Validators): boolean {
  if (ifRange === undefined) return true;
  const t = ifRange.trim();
  if (t.startsWith('"')) return t === v.etag;
  if (t.startsWith('W/')) return false; // weak tags never satisfy If-Range
  const d = httpDateSeconds(t);
  return !Number.isNaN(d) && d === v.lastModifiedSec;
}
