import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Presigned-style object links shaped like S3 SigV4 query authentication
 * (X-Amz-Date, X-Amz-Expires, X-Amz-Signature). The signature binds the method, the object key,
 * the date and the lifetime, so a HEAD on a GET link, a changed key or a stretched lifetime all
 * fail like they do on real object storage. Pure: the secret and the clock are passed in.
 */
export interface PresignInput {
  method: string;
  key: string;
  date: string;
  expires: number;
}

/** ISO 8601 basic format, second resolution, as SigV4 writes it: 20240102T030405Z. */
export function amzDate(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

export function parseAmzDate(s: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) return undefined;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return Number.isNaN(ms) ? undefined : ms;
}

export function sign(secret: Buffer, i: PresignInput): string {
  return createHmac('sha256', secret).update(`${i.method}\n${i.key}\n${i.date}\n${i.expires}`).digest('hex');
}

/** The query string of a GET link for `key`, valid `lifetimeS` seconds from `now`. */
export function presignQuery(secret: Buffer, key: string, now: number, lifetimeS: number): { query: string; expiresAt: string } {
  const date = amzDate(now);
  const signature = sign(secret, { method: 'GET', key, date, expires: lifetimeS });
  const q = new URLSearchParams({
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': 'EMULATOR/auto/s3/aws4_request',
    'X-Amz-Date': date,
    'X-Amz-Expires': String(lifetimeS),
    'X-Amz-SignedHeaders': 'host',
    'X-Amz-Signature': signature,
  });
  return { query: q.toString(), expiresAt: new Date((parseAmzDate(date) ?? now) + lifetimeS * 1000).toISOString() };
}

export type PresignCheck = 'ok' | 'bad-signature' | 'expired';

/** Check a request the way object storage does: signature first (so a forged lifetime is a forgery), then expiry. */
export function checkPresigned(secret: Buffer, method: string, key: string, q: URLSearchParams, now: number): PresignCheck {
  const date = q.get('X-Amz-Date') ?? '';
  const expiresRaw = q.get('X-Amz-Expires') ?? '';
  const given = q.get('X-Amz-Signature') ?? '';
  const start = parseAmzDate(date);
  if (start === undefined || !/^\d{1,6}$/.test(expiresRaw) || !/^[0-9a-f]{64}$/.test(given)) return 'bad-signature';
  const expected = sign(secret, { method, key, date, expires: Number(expiresRaw) });
  if (!timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(given, 'hex'))) return 'bad-signature';
  return now >= start + Number(expiresRaw) * 1000 ? 'expired' : 'ok';
}
