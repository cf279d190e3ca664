/** Pure retry policy: which failures are retried and how long to wait. No I/O here. */
export interface RetryPolicy {
  retries: number;
  baseMs: number;
  maxMs: number;
}
export const DEFAULT_RETRY: RetryPolicy = { retries: 5, baseMs: 250, maxMs: 10_000 };
/** A Retry-After longer than this is not waited out: the caller gets the error instead. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** 429 and 5xx are transient by RFC 9110 §15.5.30 / §15.6; other statuses are answers. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** Connection-level failures (node errno codes and undici's UND_ERR_* family) are retried. */
export function isRetryableError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return NETWORK_CODES.has(code) || code.startsWith('UND_ERR_');
}

/**
 * Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. Returns milliseconds, or
 * undefined when absent or unparseable (then the backoff applies).
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const s = v.trim();
  if (/^\d+$/.test(s)) return Number(s) * 1000;
  // HTTP-date forms all name the day and month; this keeps Date.parse from reading "-1" as a year.
  if (!/^[A-Za-z]{3}/.test(s)) return undefined;
  const at = Date.parse(s);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"):
 * uniform in [0, min(max, base·2^attempt)], so many clients retrying at once spread out.
 */
export function backoffDelay(attempt: number, p: RetryPolicy, random: () => number = Math.random): number {
  const cap = Math.min(p.maxMs, p.baseMs * 2 ** attempt);
  return Math.floor(random() * cap);
}

/** The wait before retry `attempt`: the server's Retry-After when it gave one, else the backoff. */
export function retryDelay(attempt: number, p: RetryPolicy, retryAfterMs: number | undefined, random?: () => number): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  return backoffDelay(attempt, p, random);
}
