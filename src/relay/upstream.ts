import { Agent, request, type Dispatcher } from 'undici';
import { describeNetError, ErrorBodySchema } from '../upstream/index.js';
import { redact } from '../util/redact.js';

export interface UpstreamTimeouts {
  /** TCP/TLS connect (default 5 s). */
  connectMs: number;
  /** From request sent to response headers (default 30 s: the assistant answers headers first). */
  headersMs: number;
  /** Longest silence between body chunks of a stream (default 120 s). */
  idleMs: number;
  /** A search answer, from request to its last byte (default 60 s; the assistant's stream has idleMs only). */
  answerMs: number;
}
export const DEFAULT_TIMEOUTS: UpstreamTimeouts = { connectMs: 5_000, headersMs: 30_000, idleMs: 120_000, answerMs: 60_000 };

export function relayAgent(t: UpstreamTimeouts): Dispatcher {
  return new Agent({ connect: { timeout: t.connectMs }, headersTimeout: t.headersMs, bodyTimeout: t.idleMs, keepAliveTimeout: 10_000 });
}

export interface UpstreamCall {
  url: string;
  method: 'GET' | 'POST';
  key: string;
  body?: string;
  accept: string;
  signal: AbortSignal;
  dispatcher: Dispatcher;
}

/**
 * One call to the service with the relay's own credentials. Only the headers built here are sent:
 * never the reader's cookies or Authorization (they belong to this origin, not the service), and
 * no X-Forwarded-For (the reader's IP is not ours to disclose; the relay enforces the per-IP limit).
 */
export function callUpstream(c: UpstreamCall): Promise<Dispatcher.ResponseData> {
  const headers: Record<string, string> = { authorization: `Bearer ${c.key}`, accept: c.accept, 'accept-encoding': 'identity', 'user-agent': 'airlock-relay' };
  if (c.body !== undefined) headers['content-type'] = 'application/json';
  // undici's request() never follows redirects (no redirect interceptor): a 3xx is an error answer.
  return request(c.url, { method: c.method, headers, body: c.body, signal: c.signal, dispatcher: c.dispatcher });
}

/** `error` for the browser (no upstream host in it), `detail` for the log. */
export type Failure = { status: 502 | 504; error: string; detail: string };

/** What a failed call means for the browser, in plain words (upstream/net-error.ts): a timeout is 504, anything else a bad gateway (RFC 9110 §15.6). */
export function classifyError(err: unknown, url: string | URL, t: Partial<UpstreamTimeouts> = {}): Failure {
  const f = describeNetError(err, { url, connectTimeoutMs: t.connectMs, headersTimeoutMs: t.headersMs, bodyTimeoutMs: t.idleMs });
  const detail = f?.reason ?? 'the exchange failed';
  if (f?.code === 'AIRLOCK_TIMEOUT' || (f?.code === 'AIRLOCK_NETWORK' && /timed out/.test(f.reason)))
    return { status: 504, error: 'the assistant service did not answer in time', detail };
  // The browser gets the kind of failure (its last parenthesis: "connection refused"), not the upstream's host.
  const kind = f?.code === 'AIRLOCK_BAD_HTTP' ? 'it did not answer with valid HTTP' : /\(([^()]+)\)$/.exec(detail)?.[1];
  return { status: 502, error: `the assistant service is unreachable${kind ? ` (${kind})` : ''}`, detail };
}

/** The `{error}` text of a small upstream error answer, keys redacted, control characters dropped, bounded. */
export async function upstreamErrorText(body: Dispatcher.ResponseData['body'], max = 16 * 1024): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += (chunk as Buffer).toString('utf8');
      if (text.length > max) break;
    }
  } catch {
    // a broken error body is no more informative than none
  } finally {
    body.destroy();
  }
  let detail = '';
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success) detail = parsed.data.error;
  } catch {
    // not JSON: say nothing rather than echo arbitrary upstream bytes into the page
  }
  return (
    redact(detail)
      // eslint-disable-next-line no-control-regex -- stripping control characters is the point
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')
      .slice(0, 300)
  );
}
