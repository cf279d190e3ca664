import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Expiring object links, signed like presigned object-storage URLs (pure): HMAC-SHA256 over
 * everything that decides which bytes are served — version, file name, form, expiry — so a link
 * for the archive cannot be turned into one for the package, another version, or a later time.
 * The mirror's admin tokens never take part: a leaked link grants one object until it expires.
 */
export type ObjectForm = 'archive' | 'airlock';
export interface LinkClaims {
  label: string;
  name: string;
  form: ObjectForm;
  expires: number; /* unix seconds */
}

const SIG = /^[A-Za-z0-9_-]{43}$/; // base64url of 32 bytes, no padding

function mac(secret: Buffer, c: LinkClaims): Buffer {
  return createHmac('sha256', secret).update(`airlock-object-link/1\n${c.label}\n${c.name}\n${c.form}\n${c.expires}`).digest();
}

/** The query string of a link (`expires=..&sig=..[&format=airlock]`). */
export function signLink(secret: Buffer, c: LinkClaims): string {
  const q = new URLSearchParams({ expires: String(c.expires) });
  if (c.form === 'airlock') q.set('format', 'airlock');
  q.set('sig', mac(secret, c).toString('base64url'));
  return q.toString();
}

export type LinkCheck = { ok: true; claims: LinkClaims } | { ok: false; why: 'forged' | 'expired' | 'malformed' };

/**
 * Check a link's query against the path's label and name. Signature first, expiry second (as S3
 * does): an expired link with a forged signature is "forged", never a hint about the secret.
 * The comparison is constant-time over equal-length MACs (timing attacks on HMAC checks).
 */
export function checkLink(secret: Buffer, label: string, name: string, q: URLSearchParams, nowMs: number): LinkCheck {
  const expiresText = q.get('expires');
  const sig = q.get('sig');
  const format = q.get('format');
  if (expiresText === null || sig === null || !/^\d{1,12}$/.test(expiresText) || !SIG.test(sig)) return { ok: false, why: 'malformed' };
  if (format !== null && format !== 'airlock') return { ok: false, why: 'malformed' };
  if (q.getAll('expires').length + q.getAll('sig').length + q.getAll('format').length !== (format === null ? 2 : 3)) return { ok: false, why: 'malformed' };
  const claims: LinkClaims = { label, name, form: format === 'airlock' ? 'airlock' : 'archive', expires: Number(expiresText) };
  if (!timingSafeEqual(Buffer.from(sig, 'base64url'), mac(secret, claims))) return { ok: false, why: 'forged' };
  if (nowMs >= claims.expires * 1000) return { ok: false, why: 'expired' };
  return { ok: true, claims };
}
