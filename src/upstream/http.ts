import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { AirlockError, AuthError, UpstreamError, type ErrorCode } from '../errors.js';
import { redact } from '../util/redact.js';
import { escapeControls } from '../util/terminal.js';
import { describeZodError } from './describe.js';
import { describeNetError, netError, type NetContext } from './net-error.js';
import { jsonTooDeepAt } from '../util/json-depth.js';
import { firstDuplicateKey } from '../util/json-text.js';
import { DEFAULT_RETRY, MAX_RETRY_AFTER_MS, isRetryableStatus, parseRetryAfter, retryDelay, type RetryPolicy } from './retry.js';
import { ErrorBodySchema } from './schemas/error.js';
import { timeoutSignal } from '../util/timeout-signal.js';

export interface RetryInfo {
  method: string;
  path: string;
  attempt: number;
  delayMs: number;
  reason: string;
}
export interface HttpOptions {
  baseUrl: string;
  timeoutMs?: number;
  retry?: RetryPolicy;
  dispatcher?: Dispatcher;
  onRetry?: (info: RetryInfo) => void;
  /** The command's stop (its signal trap): every request and every wait between retries ends on it. */
  signal?: AbortSignal;
}
export interface CallSpec {
  method: 'GET' | 'POST';
  path: string;
  key: string;
  body?: unknown;
  signal?: AbortSignal;
  /** Error codes for statuses with an endpoint-specific meaning (409 on bundle: AIRLOCK_NOT_READY). */
  codes?: Record<number, ErrorCode>;
  /** Streams: no total deadline (an answer may stream for minutes), only the idle timeouts. */
  stream?: boolean;
  accept?: string;
}
export type Response = Dispatcher.ResponseData;

const DEFAULT_TIMEOUT_MS = 30_000;
/** JSON answers of this API are small; a hostile or broken server must not make us buffer GBs. */
const MAX_JSON_BYTES = 1 << 20;
/** Answers of this API nest three levels; anything near this is not an answer of it. */
const MAX_JSON_DEPTH = 64;

/** Service text shown to a user: no keys, control characters escaped (visible, never acted on: util/terminal.ts), bounded length. */
export function sanitize(text: string, max = 500): string {
  const clean = redact(text);
  return escapeControls(clean.length > max ? clean.slice(0, max) + '...' : clean);
}

export async function readCapped(body: Response['body'], max = MAX_JSON_BYTES): Promise<string> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    n += (chunk as Buffer).length;
    if (n > max) {
      body.destroy();
      throw new UpstreamError(`response body larger than ${max} bytes`, undefined, {}, 'AIRLOCK_UPSTREAM_SCHEMA');
    }
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** The error a final non-2xx answer becomes, with the service's `{error}` text when it sent one. */
async function statusError(res: Response, spec: CallSpec): Promise<AirlockError> {
  const text = await readCapped(res.body).catch(() => '');
  let detail = '';
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success) detail = parsed.data.error;
  } catch {
    // Not the service's {error}: its bytes are not echoed (a proxy's page, or anything at all).
  }
  const what = `${spec.method} ${spec.path}: HTTP ${res.statusCode}${detail ? ` ${sanitize(detail)}` : ''}`;
  const details = { subject: spec.path, status: res.statusCode };
  if (res.statusCode === 401) return new AuthError(`authentication refused (${what}); check the API key`, details, 'AIRLOCK_UNAUTHORIZED');
  if (res.statusCode === 403) return new AuthError(`access forbidden (${what}); the key lacks permission`, details, 'AIRLOCK_FORBIDDEN');
  const code =
    spec.codes?.[res.statusCode] ?? (res.statusCode === 404 ? 'AIRLOCK_NOT_FOUND' : res.statusCode === 409 ? 'AIRLOCK_CONFLICT' : 'AIRLOCK_UPSTREAM');
  return new UpstreamError(what, res.statusCode, { subject: spec.path }, code);
}

const netContext = (o: HttpOptions, spec: CallSpec): NetContext => {
  const ms = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return { url: o.baseUrl, headersTimeoutMs: ms, bodyTimeoutMs: ms, timeoutMs: spec.stream ? undefined : ms };
};

/** The body of a 2xx answer, capped; a connection that breaks or stalls while it arrives is said plainly. */
export async function readBody(o: HttpOptions, spec: CallSpec, res: Response): Promise<string> {
  try {
    return await readCapped(res.body);
  } catch (err) {
    throw netError(err, { ...netContext(o, spec), what: `${spec.method} ${spec.path}`, subject: spec.path });
  }
}

function once(o: HttpOptions, spec: CallSpec): Promise<Response> {
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const signals = [spec.signal, spec.stream ? undefined : timeoutSignal(timeoutMs)].filter((s): s is AbortSignal => !!s);
  const headers: Record<string, string> = { authorization: `Bearer ${spec.key}`, accept: spec.accept ?? 'application/json' };
  if (spec.body !== undefined) headers['content-type'] = 'application/json';
  return request(o.baseUrl.replace(/\/+$/, '') + spec.path, {
    method: spec.method,
    headers,
    body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
    dispatcher: o.dispatcher,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: signals.length ? AbortSignal.any(signals) : undefined,
  });
}

/**
 * One API call with retries on 429/5xx/network errors (exponential backoff, full jitter,
 * Retry-After honoured). Resolves with a 2xx response whose body the caller must consume.
 */
export async function send(o: HttpOptions, call: CallSpec): Promise<Response> {
  const policy = o.retry ?? DEFAULT_RETRY;
  const stops = [call.signal, o.signal].filter((s): s is AbortSignal => !!s);
  const spec: CallSpec = { ...call, signal: stops.length > 1 ? AbortSignal.any(stops) : stops[0] };
  for (let attempt = 0; ; attempt++) {
    let res: Response | undefined;
    let reason: string;
    let retryAfter: number | undefined;
    try {
      if (spec.signal?.aborted) throw spec.signal.reason;
      res = await once(o, spec);
    } catch (err) {
      if (spec.signal?.aborted) throw new AirlockError('AIRLOCK_ABORTED', `${spec.method} ${spec.path}: aborted`, 1, { subject: spec.path }, { cause: err });
      const net = netContext(o, spec);
      const f = describeNetError(err, net);
      if (!f?.transient) throw netError(err, { ...net, what: `${spec.method} ${spec.path}`, subject: spec.path });
      reason = f.reason;
      if (attempt >= policy.retries) {
        throw new UpstreamError(`${spec.method} ${spec.path}: ${reason} (${attempt + 1} attempts)`, undefined, { subject: spec.path }, f.code);
      }
    }
    if (res) {
      if (res.statusCode >= 200 && res.statusCode < 300) return res;
      if (!isRetryableStatus(res.statusCode) || attempt >= policy.retries) throw await statusError(res, spec);
      reason = `HTTP ${res.statusCode}`;
      retryAfter = parseRetryAfter(res.headers['retry-after']);
      await res.body.dump().catch(() => {});
      if (retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_MS) {
        throw new UpstreamError(`${spec.method} ${spec.path}: ${reason}, Retry-After ${Math.round(retryAfter / 1000)} s is too long to wait`, res.statusCode, {
          subject: spec.path,
        });
      }
    }
    const delayMs = retryDelay(attempt, policy, retryAfter);
    o.onRetry?.({ method: spec.method, path: spec.path, attempt: attempt + 1, delayMs, reason: reason! });
    await sleep(delayMs, undefined, { signal: spec.signal }).catch((err: unknown) => {
      throw new AirlockError('AIRLOCK_ABORTED', `${spec.method} ${spec.path}: aborted`, 1, { subject: spec.path }, { cause: err });
    });
  }
}

/** A JSON call validated by `schema`; a response that breaks it names the field at fault. */
export async function callJson<S extends z.ZodType>(o: HttpOptions, spec: CallSpec, schema: S): Promise<z.output<S>> {
  const res = await send(o, spec);
  const text = await readBody(o, spec, res);
  if (jsonTooDeepAt(Buffer.from(text), MAX_JSON_DEPTH) >= 0) {
    throw new UpstreamError(
      `${spec.method} ${spec.path}: response nests deeper than ${MAX_JSON_DEPTH} levels`,
      res.statusCode,
      { subject: spec.path },
      'AIRLOCK_UPSTREAM_SCHEMA',
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Never the parser's words or the body's bytes: what it is, and how big.
    const type = String(res.headers['content-type'] ?? '(none)')
      .split(';')[0]!
      .slice(0, 60);
    throw new UpstreamError(
      `${spec.method} ${spec.path}: the answer is not JSON (Content-Type ${sanitize(type)}, ${Buffer.byteLength(text)} bytes)`,
      res.statusCode,
      { subject: spec.path },
      'AIRLOCK_UPSTREAM_SCHEMA',
    );
  }
  // JSON.parse keeps the last of a key named twice; another reader may take the first: refused.
  const twice = firstDuplicateKey(text);
  if (twice !== null) {
    throw new UpstreamError(
      `${spec.method} ${spec.path}: the answer names the key ${sanitize(JSON.stringify(twice.slice(0, 200)))} twice in one object`,
      res.statusCode,
      { subject: spec.path },
      'AIRLOCK_UPSTREAM_SCHEMA',
    );
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new UpstreamError(
      `${spec.method} ${spec.path}: unexpected response: ${sanitize(describeZodError(parsed.error))}`,
      res.statusCode,
      { subject: spec.path },
      'AIRLOCK_UPSTREAM_SCHEMA',
    );
  }
  return parsed.data;
}
