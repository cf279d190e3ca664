/**
 * Which failures of a download are worth another request (the connection, not the object), and
 * how long to wait: exponential backoff with full jitter (AWS Architecture Blog, "Exponential
 * Backoff And Jitter"), so many clients that lost the same server do not come back in lockstep.
 */

const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

/** A broken connection, a timeout, a premature close: resume from what is on disk. */
export function isTransientNetworkError(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && TRANSIENT_CODES.has(e.code)) return true;
  }
  return false;
}

export interface RetryPolicy {
  retries: number;
  baseMs: number;
  maxMs: number;
}
export const DEFAULT_RETRY: RetryPolicy = { retries: 6, baseMs: 250, maxMs: 15_000 };

/** Delay before attempt `n` (1-based), honouring a server's Retry-After (seconds) when it asks for longer. */
export function backoffMs(n: number, p: RetryPolicy, retryAfterSeconds?: number, rand: () => number = Math.random): number {
  const cap = Math.min(p.maxMs, p.baseMs * 2 ** (n - 1));
  const jittered = Math.floor(rand() * cap);
  return retryAfterSeconds !== undefined ? Math.min(p.maxMs, Math.max(jittered, retryAfterSeconds * 1000)) : jittered;
}

export function parseRetryAfter(v: string | undefined, now = Date.now()): number | undefined {
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, Math.ceil((t - now) / 1000));
}

/** A sleep that ends early (rejecting) when the signal aborts, so Ctrl-C is never stuck behind a backoff. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
