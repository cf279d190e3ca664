import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';
import { FixedWindowLimiter, type Hit, type LimitRule } from './limiter.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The service's own limits for the discovery endpoints: per organisation per hour, per IP per day. */
export interface RelayLimits {
  orgPerHour: number;
  ipPerDay: number;
}
export const DEFAULT_LIMITS: RelayLimits = { orgPerHour: 10_000, ipPerDay: 10_000 };

/**
 * The client key of a socket address. IPv4-mapped IPv6 is folded to IPv4; other IPv6 addresses
 * count per /64, the block one subscriber gets (RFC 6177), so a client cannot mint 2^64 fresh
 * "IPs" to escape its daily budget.
 */
export function clientKey(address: string | undefined): string {
  if (!address) return 'ip:unknown';
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return `ip:${v4[1]}`;
  if (!isIPv6(address)) return `ip:${address}`;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `ip6:${groups
    .slice(0, 4)
    .map((g) => g.padStart(4, '0'))
    .join(':')}::/64`;
}

export class RelayLimiter {
  private readonly org: LimitRule;
  private readonly ip: LimitRule;
  private readonly limiter: FixedWindowLimiter;

  constructor(limits: RelayLimits, now: () => number = Date.now) {
    this.org = { name: 'organisation', limit: limits.orgPerHour, windowMs: HOUR };
    this.ip = { name: 'ip', limit: limits.ipPerDay, windowMs: DAY };
    this.limiter = new FixedWindowLimiter(now);
  }

  /** null when admitted; else the 429 answer's parts. */
  admit(req: IncomingMessage): { retryAfterSec: number; error: string } | null {
    const hits: Hit[] = [
      { key: 'org', rule: this.org },
      { key: clientKey(req.socket.remoteAddress), rule: this.ip },
    ];
    const r = this.limiter.take(hits);
    if (r.ok) return null;
    const per = r.rule.windowMs === HOUR ? 'hour' : 'day';
    return {
      retryAfterSec: Math.max(1, Math.ceil(r.retryAfterMs / 1000)),
      error: `rate limit exceeded: ${r.rule.limit} requests per ${r.rule.name === 'ip' ? 'client IP' : 'organisation'} per ${per}`,
    };
  }
}
