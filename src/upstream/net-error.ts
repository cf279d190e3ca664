import { AirlockError, UpstreamError } from '../errors.js';
import { escapeControls } from '../util/terminal.js';

/**
 * The one place where a failed HTTP exchange becomes words (pure): undici's errors (its own
 * package's and the copy inside Node's global fetch, so matched by code and name, never by
 * class), Node's errno codes and AbortSignal.timeout's TimeoutError, each said plainly with the
 * host it was about. Never the library's text, never the path or query of the URL (a presigned
 * link's query is its credential), never a byte of what the server sent but the reason phrase
 * of a status line refused for holding control characters (escaped, bounded: describeStatusLine).
 */
export type NetCode = 'AIRLOCK_NETWORK' | 'AIRLOCK_TIMEOUT' | 'AIRLOCK_BAD_HTTP';
export interface NetFailure {
  code: NetCode;
  /** "could not connect to 127.0.0.1:9 (connection refused)". */
  reason: string;
  /** Worth another request (the connection failed, not the answer). */
  transient: boolean;
}
export interface NetContext {
  url: string | URL;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** The deadline of an AbortSignal.timeout on the whole exchange. */
  timeoutMs?: number;
}

const seconds = (ms: number | undefined) => (ms === undefined ? '' : ` within ${+(ms / 1000).toFixed(3)} s`);
const CLOSED = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'ERR_STREAM_PREMATURE_CLOSE']);
const TLS = /^(CERT_|ERR_TLS_|ERR_SSL_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_(GET|VERIFY)_|ERR_OSSL_|HOSTNAME_MISMATCH$)/;

function where(url: string | URL): { host: string; hostname: string; origin: string } {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    const port = u.port || (u.protocol === 'https:' ? '443' : '80');
    return { host: `${u.hostname}:${port}`, hostname: u.hostname, origin: u.origin };
  } catch {
    return { host: '(unknown host)', hostname: '(unknown host)', origin: '(unknown server)' };
  }
}

/** What went wrong, if `err` is a network or protocol failure of an exchange with `c.url`; undefined otherwise. */
export function describeNetError(err: unknown, c: NetContext): NetFailure | undefined {
  const { host, hostname, origin } = where(c.url);
  for (
    let e = err as { code?: unknown; name?: unknown; cause?: unknown } | null | undefined, depth = 0;
    e && typeof e === 'object' && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    const code = typeof e.code === 'string' ? e.code : '';
    const name = typeof e.name === 'string' ? e.name : '';
    if (code === 'ECONNREFUSED') return { code: 'AIRLOCK_NETWORK', reason: `could not connect to ${host} (connection refused)`, transient: true };
    if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || name === 'ConnectTimeoutError') {
      return { code: 'AIRLOCK_NETWORK', reason: `could not connect to ${host}${seconds(c.connectTimeoutMs)} (connection timed out)`, transient: true };
    }
    if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
      return { code: 'AIRLOCK_NETWORK', reason: `could not connect to ${host} (no route to the host)`, transient: true };
    if (code === 'ENOTFOUND') return { code: 'AIRLOCK_NETWORK', reason: `could not find the host ${hostname} (no such name in DNS)`, transient: false };
    if (code === 'EAI_AGAIN') return { code: 'AIRLOCK_NETWORK', reason: `could not look up the host ${hostname} (DNS did not answer)`, transient: true };
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || name === 'HeadersTimeoutError') {
      return { code: 'AIRLOCK_TIMEOUT', reason: `no response headers from ${host}${seconds(c.headersTimeoutMs)}`, transient: true };
    }
    if (code === 'UND_ERR_BODY_TIMEOUT' || name === 'BodyTimeoutError') {
      return {
        code: 'AIRLOCK_TIMEOUT',
        reason: `the answer from ${host} stopped${c.bodyTimeoutMs === undefined ? '' : ` for ${+(c.bodyTimeoutMs / 1000).toFixed(3)} s`}`,
        transient: true,
      };
    }
    if (name === 'TimeoutError') return { code: 'AIRLOCK_TIMEOUT', reason: `no complete answer from ${host}${seconds(c.timeoutMs)}`, transient: true };
    if (code === 'UND_ERR_HEADERS_OVERFLOW' || name === 'HeadersOverflowError') {
      return {
        code: 'AIRLOCK_BAD_HTTP',
        reason: `the server at ${origin} did not answer with valid HTTP (its response headers are too large)`,
        transient: false,
      };
    }
    if (code.startsWith('HPE_') || name === 'HTTPParserError') {
      return { code: 'AIRLOCK_BAD_HTTP', reason: `the server at ${origin} did not answer with valid HTTP`, transient: false };
    }
    if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
      return { code: 'AIRLOCK_NETWORK', reason: `the answer from ${host} ended before the length it announced`, transient: true };
    }
    if (CLOSED.has(code)) return { code: 'AIRLOCK_NETWORK', reason: `the connection to ${host} was closed before the answer was complete`, transient: true };
    if (TLS.test(code))
      return {
        code: 'AIRLOCK_NETWORK',
        reason: `the TLS connection to ${host} failed (its certificate was not accepted, or TLS could not be agreed)`,
        transient: false,
      };
  }
  return undefined;
}

/** A reason phrase holds only tabs, spaces and visible characters (RFC 9112 §4: HTAB / SP / VCHAR / obs-text). */
const BAD_REASON = /[\x00-\x08\x0a-\x1f\x7f]/; // eslint-disable-line no-control-regex -- the characters refused

/**
 * A status line that is not valid HTTP although the parser let it through: its reason phrase
 * holds control characters. Said as AIRLOCK_BAD_HTTP naming the status and the phrase (escaped,
 * at most 64 characters); not worth another request (the server answers that way). Undefined
 * for a valid status line, whatever its status.
 */
export function describeStatusLine(status: number, reason: string | undefined, c: NetContext): NetFailure | undefined {
  if (reason === undefined || !BAD_REASON.test(reason)) return undefined;
  const phrase = escapeControls(reason.length > 64 ? `${reason.slice(0, 64)}…` : reason);
  return {
    code: 'AIRLOCK_BAD_HTTP',
    reason: `the server at ${where(c.url).origin} did not answer with valid HTTP (its status line, HTTP ${status} "${phrase}", holds control characters)`,
    transient: false,
  };
}

/**
 * Any failure of an exchange with `c.url` as one of ours: an AirlockError passes through; a
 * network or protocol failure becomes an UpstreamError with its code and plain reason (`what`
 * before it: "GET /v1/jobs/x"); anything else the same, without the library's words (the
 * original stays as `cause`, printed with AIRLOCK_DEBUG only by those who print causes).
 */
export function netError(err: unknown, c: NetContext & { what?: string; subject?: string }): AirlockError {
  if (err instanceof AirlockError) return err;
  const f = describeNetError(err, c) ?? { code: 'AIRLOCK_NETWORK' as const, reason: `the exchange with ${where(c.url).origin} failed`, transient: false };
  const e = new UpstreamError(c.what ? `${c.what}: ${f.reason}` : f.reason, undefined, { subject: c.subject ?? where(c.url).origin }, f.code);
  Object.defineProperty(e, 'cause', { value: err, enumerable: false, configurable: true });
  return e;
}
