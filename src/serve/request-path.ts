/**
 * Decode a request target exactly once, with strict rules, into the key of the version index.
 * The result is only ever looked up in a Map built from the manifest: it is never joined onto a
 * file-system path. Refusals are early and cheap:
 *  - 400: not origin-form, raw backslash or control/non-ASCII byte, bad %-escape, %00, an encoded
 *    '/' or '\' (%2f, %5c — the classic "encoded separator" traversal), invalid or overlong UTF-8
 *    (%c0%ae is '.' in broken decoders: CVE-2000-0884 style), decoded control characters.
 *  - 404: empty segments ('//' prefixes would become protocol-relative redirects), dot segments
 *    and dotfiles ('.git', '.env'): never part of a served site (the serving rules). An empty
 *    segment's miss carries its decoded path (`miss`), so it gets the nearest 404.html like any miss.
 *  - 414: absurdly long paths (RFC 9110 §15.5.15), refused before any work is done.
 */
export type Target = { ok: true; path: string; query: string } | { ok: false; status: 400 | 404 | 414; reason: string; miss?: string };

export const MAX_PATH_LENGTH = 4096;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Plain printable ASCII without '%' or '\' needs no decoding: the hot path. */
const PLAIN = /^[\x21-\x24\x26-\x5b\x5d-\x7e]*$/;

export function parseTarget(url: string): Target {
  if (url.charCodeAt(0) !== 47 /* '/' */) return { ok: false, status: 400, reason: 'request target is not an absolute path' };
  const q = url.indexOf('?');
  const raw = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? '' : url.slice(q + 1);
  if (raw.length > MAX_PATH_LENGTH) return { ok: false, status: 414, reason: 'path too long' };
  let path: string;
  if (PLAIN.test(raw)) path = raw;
  else {
    const decoded = decodeStrict(raw);
    if (typeof decoded !== 'string') return decoded;
    path = decoded;
  }
  const bad = checkSegments(path);
  if (bad === 'empty path segment') return { ok: false, status: 404, reason: bad, miss: path };
  return bad ? { ok: false, status: 404, reason: bad } : { ok: true, path, query };
}

function decodeStrict(raw: string): string | { ok: false; status: 400; reason: string } {
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 37 /* '%' */) {
      const hex = raw.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return fail('malformed percent-escape');
      const b = parseInt(hex, 16);
      if (b === 0x2f || b === 0x5c) return fail('encoded path separator');
      if (b < 0x20 || b === 0x7f) return fail('encoded control character');
      bytes.push(b);
      i += 2;
    } else if (c === 92 /* '\' */) return fail('backslash in path');
    else if (c < 0x21 || c > 0x7e) return fail('raw control or non-ASCII byte in path');
    else bytes.push(c);
  }
  try {
    // fatal: rejects invalid sequences, overlong forms (%c0%ae) and lone surrogates.
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    return fail('invalid UTF-8 in path');
  }
}

function fail(reason: string): { ok: false; status: 400; reason: string } {
  return { ok: false, status: 400, reason };
}

/** Every segment but a final empty one (a trailing '/') must be a plain, non-dot name. */
function checkSegments(path: string): string | null {
  if (!path.includes('//') && !path.includes('/.')) return null; // hot path: no split
  const segs = path.split('/');
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i]!;
    if (s === '') {
      if (i === segs.length - 1) break;
      return 'empty path segment';
    }
    if (s.charCodeAt(0) === 46 /* '.' */) return s === '.' || s === '..' ? 'dot segment' : 'dotfile';
  }
  return null;
}
