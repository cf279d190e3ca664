/**
 * Pure reading of the object-storage response headers that matter for a resumable, verified
 * download: ETag (RFC 9110 §8.8.3), Content-Range (§14.4), Repr-Digest (RFC 9530) and S3's
 * x-amz-checksum-sha256. No I/O here; every function is total and fails closed (undefined when
 * the header is absent or not in the one shape we trust).
 */

export type HeaderBag = Record<string, string | string[] | undefined>;

export function header(h: HeaderBag, name: string): string | undefined {
  const v = h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A strong ETag usable in If-Range. RFC 9110 §13.1.5: If-Range must not use a weak validator,
 * so `W/"..."` (and anything malformed) gives undefined and the caller restarts from 0 instead of
 * risking the splice of two different objects.
 */
export function strongEtag(h: HeaderBag): string | undefined {
  const v = header(h, 'etag')?.trim();
  return v && /^"[\x21\x23-\x7e\x80-\xff]*"$/.test(v) ? v : undefined;
}

/**
 * The MD5 inside a plain ETag. S3 single-part uploads use the hex MD5 of the object; multipart
 * uploads append `-N` and are NOT an MD5 of the object, so they are never compared.
 */
export function plainMd5(etag: string | undefined): string | undefined {
  const m = etag && /^"([0-9a-fA-F]{32})"$/.exec(etag);
  return m ? m[1]!.toLowerCase() : undefined;
}

export interface ContentRange {
  start: number;
  end: number;
  total: number | undefined;
}

/** `bytes 100-199/1000` (or `/*`). Unsatisfied form `bytes *\/1000` gives start = -1. */
export function parseContentRange(v: string | undefined): ContentRange | undefined {
  if (!v) return undefined;
  const sat = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(v.trim());
  if (sat) {
    const start = Number(sat[1]);
    const end = Number(sat[2]);
    const total = sat[3] === '*' ? undefined : Number(sat[3]);
    if (end < start || (total !== undefined && end >= total)) return undefined;
    return { start, end, total };
  }
  const unsat = /^bytes \*\/(\d+)$/.exec(v.trim());
  return unsat ? { start: -1, end: -1, total: Number(unsat[1]) } : undefined;
}

export function contentLength(h: HeaderBag): number | undefined {
  const v = header(h, 'content-length');
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** base64 of exactly 32 bytes → lowercase hex, else undefined (multipart `…-N` checksums are not whole-object digests). */
function b64Sha256(v: string | undefined): string | undefined {
  if (!v || !/^[A-Za-z0-9+/]{43}=$/.test(v)) return undefined;
  const buf = Buffer.from(v, 'base64');
  return buf.length === 32 ? buf.toString('hex') : undefined;
}

/**
 * The whole object's SHA-256 as the server states it: RFC 9530 `Repr-Digest: sha-256=:<b64>:`
 * (a representation digest, so it describes the whole object even on a 206), or S3's
 * `x-amz-checksum-sha256` (full-object checksum; composite multipart values do not parse).
 */
export function statedSha256(h: HeaderBag): string | undefined {
  const repr = header(h, 'repr-digest');
  if (repr) {
    for (const member of repr.split(',')) {
      const m = /^\s*sha-256\s*=\s*:([^:]*):\s*$/.exec(member);
      const hex = m ? b64Sha256(m[1]) : undefined;
      if (hex) return hex;
    }
  }
  return b64Sha256(header(h, 'x-amz-checksum-sha256')?.trim());
}

/** A presigned link's "expired" answers: S3 403 AccessDenied "Request has expired", STS/GCS 400 ExpiredToken. */
export function isExpiredLinkAnswer(status: number, body: string): boolean {
  if (status === 403)
    return (/<Code>\s*AccessDenied\s*<\/Code>/i.test(body) && /Request has expired/i.test(body)) || /<Code>\s*ExpiredToken\s*<\/Code>/i.test(body);
  if (status === 400) return /ExpiredToken/.test(body);
  return false;
}

/** A URL fit for messages: the presigned query string is a bearer credential and is never printed. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    // file:, data: and other schemes have no origin ("null"): name them by scheme and host
    if (u.origin === 'null')
      return `${u.protocol}${u.host || u.protocol === 'file:' ? '//' : ''}${u.host}${u.pathname.slice(0, 200)}${u.pathname.length > 200 ? '…' : ''}`;
    return `${u.origin}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '(invalid URL)';
  }
}
