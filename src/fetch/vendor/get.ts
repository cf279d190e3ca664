import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { AirlockError, EXIT, type ErrorCode } from '../../errors.js';
import { safeUrl } from '../validators.js';
import { describeNetError } from '../../upstream/index.js';
import { timeoutSignal } from '../../util/timeout-signal.js';

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

export interface Got {
  url: string;
  bytes: Buffer;
  contentType: string;
}

export { parseMirror } from './flags.js';

export function vendorError(url: string, why: string, code: ErrorCode = 'AIRLOCK_VENDOR_FETCH'): AirlockError {
  return new AirlockError(code, `--vendor: cannot vendor ${safeUrl(url)}: ${why}`, EXIT.FAILURE, { subject: safeUrl(url) });
}

/** Where a request for `url` goes: its mirror, else itself when https; anything else is refused. */
export function target(url: string, mirrors: ReadonlyMap<string, string>): string {
  const u = new URL(url);
  const base = mirrors.get(u.origin);
  if (base !== undefined) return base + u.pathname + u.search;
  if (u.protocol !== 'https:')
    throw vendorError(
      url,
      `not https (only https is fetched; map its origin with --vendor-mirror ${u.origin}=URL to fetch it from a mirror)`,
      'AIRLOCK_VENDOR_INSECURE',
    );
  return u.href;
}

/** A network failure in words (the tool's one network describer), never undici's or the errno's text. */
const netWords = (err: unknown, to: string, timeoutMs: number): string => describeNetError(err, { url: to, timeoutMs })?.reason ?? 'the connection failed';

/**
 * Addresses that are not the public internet: this machine, private and carrier networks,
 * link-local (cloud metadata at 169.254.169.254), multicast, reserved. A page may name any address;
 * fetching one of these would reach into the connected side's own network (server-side request
 * forgery), so a URL a page gives is fetched only when every address of its host is public. A
 * mirror the user names with --vendor-mirror is trusted wherever it is. IPv4-mapped IPv6
 * addresses are checked against the IPv4 ranges (BlockList does that).
 */
const NOT_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const)
  NOT_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(net, bits, 'ipv6');

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && !NOT_PUBLIC.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

class PrivateAddress extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(`${host} resolves to ${address}`);
  }
}

/** dns.lookup for the connection itself (no second lookup a rebinding name could answer differently): only public addresses. */
function publicLookup(
  hostname: string,
  options: LookupOptions,
  cb: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return cb(err, []);
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) return cb(new PrivateAddress(hostname, bad.address), []);
    if (options.all) return cb(null, addresses);
    return cb(null, addresses[0]!.address, addresses[0]!.family);
  });
}

function privateIn(err: unknown): PrivateAddress | null {
  for (let e = err, i = 0; e instanceof Error && i < 5; e = e.cause, i++) if (e instanceof PrivateAddress) return e;
  return null;
}

const notPublic = (url: string, host: string, address: string) =>
  vendorError(
    url,
    `${host}${address === host ? '' : ` (${address})`} is not a public internet address (this machine, a private or link-local network); a page's addresses are fetched only from the internet: map its origin with --vendor-mirror ORIGIN=URL to fetch it from a mirror you name`,
    'AIRLOCK_VENDOR_PRIVATE',
  );

let shared: Agent | null = null;
let publicOnly: Agent | null = null;

export async function vendorGet(url: string, o: VendorGetOptions): Promise<Got> {
  let current = url;
  for (let hop = 0; ; hop++) {
    let to: string;
    try {
      to = target(current, o.mirrors);
    } catch (err) {
      if (hop === 0 || !(err instanceof AirlockError)) throw err;
      throw vendorError(url, `redirected to ${safeUrl(current)}, which is not https (a downgrade is never followed)`, err.code);
    }
    // Where a page's own address leads (not a mirror the user named): the public internet only.
    const mirrored = o.mirrors.has(new URL(current).origin);
    if (!mirrored) {
      const host = new URL(to).hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) !== 0 && !isPublicAddress(host)) throw notPublic(url, host, host);
    }
    const dispatcher =
      o.dispatcher ??
      (mirrored ? (shared ??= new Agent({ connections: 4 })) : (publicOnly ??= new Agent({ connections: 4, connect: { lookup: publicLookup } })));
    const signal = AbortSignal.any([timeoutSignal(o.timeoutMs), ...(o.signal ? [o.signal] : [])]);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(to, {
        method: 'GET',
        dispatcher,
        signal,
        headersTimeout: o.timeoutMs,
        bodyTimeout: o.timeoutMs,
        headers: { 'user-agent': o.userAgent, accept: '*/*', 'accept-encoding': 'identity' },
      });
    } catch (err) {
      if (o.signal?.aborted) throw err;
      const p = privateIn(err);
      if (p) throw notPublic(url, p.host, p.address);
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
