/**
 * Accept-Encoding negotiation (RFC 9110 §12.5.3) over the precompressed variants a file has
 * (pure). q-values are honoured; `*` covers codings not named; `q=0` refuses. Ties prefer br
 * (smaller). Identity is always the fallback: we never answer 406 for a static file.
 * Results are memoised per header value because clients repeat the same few strings.
 */
export type Coding = 'br' | 'gzip' | null;

interface Prefs {
  br: number;
  gzip: number;
}
const memo = new Map<string, Prefs>();
const MEMO_MAX = 256;

function prefs(header: string): Prefs {
  let p = memo.get(header);
  if (p) return p;
  let br = -1,
    gzip = -1,
    star = -1;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';');
    let q = 1;
    for (const param of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(param);
      if (m) q = Number(m[1]);
    }
    const coding = name.trim().toLowerCase();
    if (coding === 'br') br = q;
    else if (coding === 'gzip' || coding === 'x-gzip') gzip = q;
    else if (coding === '*') star = q;
  }
  p = { br: br === -1 ? Math.max(star, 0) : br, gzip: gzip === -1 ? Math.max(star, 0) : gzip };
  if (memo.size >= MEMO_MAX) memo.clear();
  if (header.length <= 256) memo.set(header, p);
  return p;
}

/**
 * `tieGzip`: a tie goes to gzip (bodies compressed on request, compress-now.ts: gzip streams its
 * first bytes at once and costs less CPU, brotli 5 emits only at its end; the br variant file,
 * once built, wins ties again).
 */
export function negotiate(header: string | undefined, has: { br: boolean; gzip: boolean }, tieGzip = false): Coding {
  if (!header || (!has.br && !has.gzip)) return null;
  const p = prefs(header);
  const br = has.br ? p.br : 0;
  const gz = has.gzip ? p.gzip : 0;
  if (br <= 0 && gz <= 0) return null;
  return br > gz || (br === gz && !tieGzip) ? 'br' : 'gzip';
}
