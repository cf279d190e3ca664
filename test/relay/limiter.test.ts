import { describe, expect, it } from 'vitest';
import { FixedWindowLimiter, clientKey, type LimitRule } from '../../src/relay/index.js';

const hour: LimitRule = { name: 'organisation', limit: 3, windowMs: 3_600_000 };
const day: LimitRule = { name: 'ip', limit: 2, windowMs: 86_400_000 };

describe('FixedWindowLimiter (pure, injected clock)', () => {
  it('admits up to the limit, then refuses with the time left in the window', () => {
    let now = 0;
    const l = new FixedWindowLimiter(() => now);
    for (let i = 0; i < 3; i++) expect(l.take([{ key: 'org', rule: hour }]).ok).toBe(true);
    now = 1000;
    expect(l.take([{ key: 'org', rule: hour }])).toEqual({ ok: false, rule: hour, retryAfterMs: 3_599_000 });
    now = 3_600_000;
    expect(l.take([{ key: 'org', rule: hour }]).ok).toBe(true);
  });

  it('a refusal by one limit spends none of the others', () => {
    const l = new FixedWindowLimiter(() => 0);
    const hits = (ip: string) => [
      { key: 'org', rule: hour },
      { key: ip, rule: day },
    ];
    expect(l.take(hits('a')).ok).toBe(true);
    expect(l.take(hits('a')).ok).toBe(true);
    for (let i = 0; i < 10; i++) expect(l.take(hits('a')).ok).toBe(false); // ip a is out; org keeps 1
    expect(l.take(hits('b')).ok).toBe(true);
    const r = l.take(hits('c'));
    expect(r.ok === false && r.rule.name).toBe('organisation');
  });

  it('reports the longest wait when several limits refuse', () => {
    const l = new FixedWindowLimiter(() => 0);
    const one = (r: LimitRule) => ({ ...r, limit: 1 });
    const hits = [
      { key: 'org', rule: one(hour) },
      { key: 'ip', rule: one(day) },
    ];
    l.take(hits);
    const r = l.take(hits);
    expect(r.ok === false && r.retryAfterMs).toBe(86_400_000);
  });

  it('memory: ended windows are swept, so many one-off clients do not accumulate', () => {
    let now = 0;
    const l = new FixedWindowLimiter(() => now);
    for (let i = 0; i < 1000; i++) l.take([{ key: `ip${i}`, rule: hour }]);
    expect(l.size).toBe(1000);
    now = 2 * 3_600_000;
    l.take([{ key: 'late', rule: hour }]);
    expect(l.size).toBe(1);
  });
});

describe('clientKey', () => {
  it('folds IPv4-mapped IPv6 to IPv4 and counts IPv6 per /64 (address rotation inside a /64 stays one client)', () => {
    expect(clientKey('127.0.0.1')).toBe('ip:127.0.0.1');
    expect(clientKey('::ffff:10.1.2.3')).toBe('ip:10.1.2.3');
    expect(clientKey('2001:db8:1:2::1')).toBe(clientKey('2001:db8:1:2:ffff:1:2:3'));
    expect(clientKey('2001:db8:1:2::1')).not.toBe(clientKey('2001:db8:1:3::1'));
    expect(clientKey('::1')).toBe('ip6:0000:0000:0000:0000::/64');
    expect(clientKey(undefined)).toBe('ip:unknown');
  });
});
