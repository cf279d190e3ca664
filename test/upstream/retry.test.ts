import { describe, expect, it } from 'vitest';
import { backoffDelay, isRetryableError, isRetryableStatus, parseRetryAfter, retryDelay } from '../../src/upstream/retry.js';

const P = { retries: 5, baseMs: 100, maxMs: 1000 };

describe('retry policy', () => {
  it('Retry-After as delay-seconds and as HTTP-date (RFC 9110 §10.2.3)', () => {
    const now = Date.parse('2024-05-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Wed, 01 May 2024 00:00:07 GMT', now)).toBe(7000);
    expect(parseRetryAfter('Tue, 30 Apr 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
  });

  it('full jitter stays within [0, min(max, base*2^n)]', () => {
    expect(backoffDelay(0, P, () => 0.999)).toBe(99);
    expect(backoffDelay(3, P, () => 0.5)).toBe(400);
    expect(backoffDelay(10, P, () => 0.999)).toBe(999);
    expect(backoffDelay(2, P, () => 0)).toBe(0);
  });

  it('a Retry-After replaces the backoff', () => {
    expect(retryDelay(4, P, 2500, () => 0)).toBe(2500);
    expect(retryDelay(1, P, undefined, () => 0.5)).toBe(100);
  });

  it('retries 429, 5xx and connection errors only', () => {
    expect([429, 500, 502, 503, 599].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 409, 422].some(isRetryableStatus)).toBe(false);
    expect(isRetryableError({ code: 'ECONNRESET' })).toBe(true);
    expect(isRetryableError({ code: 'UND_ERR_SOCKET' })).toBe(true);
    expect(isRetryableError({ code: 'ENOENT' })).toBe(false);
    expect(isRetryableError(new Error('x'))).toBe(false);
  });
});
