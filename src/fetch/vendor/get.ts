import { Agent, request, type Dispatcher } from 'undici';
import { AirlockError, EXIT, UsageError } from '../../errors.js';
import { safeUrl } from '../validators.js';
import { describeNetError } from '../../upstream/index.js';

/**
 * Downloading one third-party resource for `--vendor` (vendoring third-party resources): https only (a mirror mapping
 * may point an origin elsewhere, the enterprise's CDN mirror or a test server), a bounded number
 * of redirects each checked by the same rule, a bounded body read chunk by chunk (never more than
 * the limit + one chunk in memory), and timeouts on headers and body.
 */
export interface VendorGetOptions {
  /** `https://origin` → `base` (http or https): requests for that origin go there instead, path and query kept. */
  mirrors: ReadonlyMap<string, string>;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  dispatcher?: Dispatcher;
  signal?: AbortSignal;
  userAgent: string;
}

export interface Got { url: string; bytes: Buffer; contentType: string }

/** `--vendor-mirror https://fonts.googleapis.com=http://127.0.0.1:8080` → [origin, base]. */
export function parseMirror(spec: string): [string, string] {
  const eq = spec.indexOf('=');
  const bad = (why: string) => new UsageError(`--vendor-mirror ${JSON.stringify(spec)}: ${why}; expected https://ORIGIN=URL, e.g. https://fonts.googleapis.com=https://cdn-mirror.corp.example/fonts.googleapis.com`, { subject: '--vendor-mirror' });
  if (eq <= 0) throw bad('no "="');
  let from: URL;
  let to: URL;
  try {
    from = new URL(spec.slice(0, eq));
    to = new URL(spec.slice(eq + 1));
  } catch {
    throw bad('not two URLs');
  }
  if (from.protocol !== 'https:' || from.pathname !== '/' || from.search || from.username || from.password) throw bad('the left side must be an https origin');
  if ((to.protocol !== 'https:' && to.protocol !== 'http:') || to.search || to.hash || to.username || to.password) throw bad('the right side must be an http(s) URL without query or credentials');
  return [from.origin, to.href.replace(/\/$/, '')];
}

export function vendorError(url: string, why: string, code = 'AIRLOCK_VENDOR_FETCH'): AirlockError {
  return new AirlockError(code, `--vendor: cannot vendor ${safeUrl(url)}: ${why}`, EXIT.FAILURE, { subject: safeUrl(url) });
}

/** Where a request for `url` goes: its mirror, else itself when https; anything else is refused. */
export function target(url: string, mirrors: ReadonlyMap<string, string>): string {
  const u = new URL(url);
  const base = mirrors.get(u.origin);
  if (base !== undefined) return base + u.pathname + u.search;
  if (u.protocol !== 'https:') throw vendorError(url, `not https (only https is fetched; map its origin with --vendor-mirror ${u.origin}=URL to fetch it from a mirror)`, 'AIRLOCK_VENDOR_INSECURE');
  return u.href;
}

/** A network failure in words (the tool's one network describer), never undici's or the errno's text. */
const netWords = (err: unknown, to: string, timeoutMs: number): string =>
  describeNetError(err, { url: to, timeoutMs })?.reason ?? 'the connection failed';

let shared: Agent | null = null;

export async function vendorGet(url: string, o: VendorGetOptions): Promise<Got> {
  const dispatcher = o.dispatcher ?? (shared ??= new Agent({ connections: 4 }));
  let current = url;
  for (let hop = 0; ; hop++) {
    let to: string;
    try {
      to = target(current, o.mirrors);
    } catch (err) {
      if (hop === 0 || !(err instanceof AirlockError)) throw err;
      throw vendorError(url, `redirected to ${safeUrl(current)}, which is not https (a downgrade is never followed)`, err.code);
    }
    const signal = AbortSignal.any([AbortSignal.timeout(o.timeoutMs), ...(o.signal ? [o.signal] : [])]);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(to, { method: 'GET', dispatcher, signal, headersTimeout: o.timeoutMs, bodyTimeout: o.timeoutMs,
        headers: { 'user-agent': o.userAgent, accept: '*/*', 'accept-encoding': 'identity' } });
    } catch (err) {
      if (o.signal?.aborted) throw err;
      throw vendorError(url, `request failed: ${netWords(err, to, o.timeoutMs)}`);
    }
    if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location !== undefined) {
      res.body.resume();
      if (hop >= o.maxRedirects) throw vendorError(url, `more than ${o.maxRedirects} redirects`);
      const loc = String(res.headers.location);
      let next: URL;
      try {
        next = new URL(loc, current);
      } catch {
        throw vendorError(url, 'redirected to an invalid location');
      }
      // The location is judged against the ORIGINAL URL space: a relative one stays on the original origin (and its mirror).
      current = next.href;
      continue;
    }
    if (res.statusCode !== 200) {
      res.body.resume();
      throw vendorError(url, `HTTP ${res.statusCode}`);
    }
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > o.maxBytes) {
      res.body.destroy();
      throw vendorError(url, `it is ${declared} bytes, more than the limit of ${o.maxBytes}`, 'AIRLOCK_VENDOR_LIMIT');
    }
    const chunks: Buffer[] = [];
    let n = 0;
    try {
      for await (const c of res.body) {
        n += (c as Buffer).length;
        if (n > o.maxBytes) {
          res.body.destroy();
          throw vendorError(url, `it is more than the limit of ${o.maxBytes} bytes`, 'AIRLOCK_VENDOR_LIMIT');
        }
        chunks.push(c as Buffer);
      }
    } catch (err) {
      if (err instanceof AirlockError || o.signal?.aborted) throw err;
      throw vendorError(url, `reading the body failed: ${netWords(err, to, o.timeoutMs)}`);
    }
    const ct = res.headers['content-type'];
    return { url, bytes: Buffer.concat(chunks), contentType: (Array.isArray(ct) ? ct[0] : ct) ?? '' };
  }
}
