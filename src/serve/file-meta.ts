import mime from 'mime-types';

/**
 * Per-file response metadata that depends only on the file's name (pure): content type,
 * cache policy, whether a client may get it compressed.
 */

/** Content type from mime-types, with `charset=utf-8` for text; unknown names are bytes. */
export function contentTypeFor(path: string): string {
  return mime.contentType(path.slice(path.lastIndexOf('/') + 1)) || 'application/octet-stream';
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';
/** A content hash in a name: ≥8 hex characters with a digit, between separators (main.3f2a9c1d.js). */
const HASHED_NAME = /(?:^|[.\-_~])(?=[0-9a-f]*\d)[0-9a-f]{8,}(?=[.\-_~]|$)/i;

/**
 * Long-lived `immutable` only where the name changes with the content (the serving rules):
 * Next.js `_next/static/**` and names carrying a hash. HTML always revalidates, because its
 * URL is stable across versions — an immutable page would survive `airlock activate`.
 */
export function cacheControlFor(path: string, contentType: string): string {
  if (contentType.startsWith('text/html')) return REVALIDATE;
  if (path.startsWith('_next/static/')) return IMMUTABLE;
  const base = path.slice(path.lastIndexOf('/') + 1);
  return HASHED_NAME.test(base) ? IMMUTABLE : REVALIDATE;
}

/** Types worth compressing: a `Vary: Accept-Encoding` belongs on these even without a variant. */
export function compressible(contentType: string): boolean {
  const t = contentType.split(';')[0]!.trim();
  return t.startsWith('text/') || /[/+](json|xml|javascript|ecmascript)$/.test(t) || t === 'image/svg+xml' || t === 'application/wasm';
}
