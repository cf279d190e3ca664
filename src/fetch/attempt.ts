import type { Dispatcher } from 'undici';
import { DigestMismatchError, UpstreamError } from '../errors.js';
import { Digests } from './digests.js';
import { PartSink, type OpenFile, type SinkCap } from './sink.js';
import { get, type Response } from './get.js';
import { contentLength, header, isExpiredLinkAnswer, parseContentRange, safeUrl, statedSha256, strongEtag, type HeaderBag } from './validators.js';
import { parseRetryAfter } from './retry.js';
import { describeNetError, describeStatusLine, netError, type NetContext } from '../upstream/net-error.js';

/** What the download knows of the object so far; `have` bytes of it are on disk in the part. */
export interface PartState {
  have: number;
  etag: string | undefined;
  total: number | undefined;
  statedSha256: string | undefined;
  digests: Digests;
}

export type Outcome = { kind: 'complete' } | { kind: 'restart'; reason: string } | { kind: 'expired' } | { kind: 'retry'; reason: string; retryAfter?: number };

export interface AttemptContext {
  url: string;
  partPath: string;
  dispatcher: Dispatcher;
  signal?: AbortSignal;
  bodyTimeoutMs: number;
  headersTimeoutMs: number;
  openFile?: OpenFile;
  /** The size the service announced for the object (sizeBytes). */
  expectedSize?: number;
  /** The most bytes taken, announced or not: what is announced above it is refused before the body. */
  maxBytes: number;
  /** The setting that sets maxBytes, for the refusal (default: the archive size limit). */
  maxBytesName?: string;
  /** Progress: bytes of the object received so far (at most one ring of them not yet on disk). */
  onBytes: (received: number) => void;
  /** Called once the object's identity is known from a 200: throws at once to refuse it, else records it (the sidecar). */
  onIdentity: (s: PartState) => Promise<void>;
}

const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);

/**
 * The bytes the object may have: what the object host announced (Content-Length, Content-Range),
 * else what the service announced (sizeBytes), else the archive limits' bound. An endless body is
 * refused as soon as it passes it (exit 4; download.ts removes the part), not written to disk.
 */
function capOf(ctx: AttemptContext, s: PartState): SinkCap {
  const announced =
    s.total !== undefined ? ([s.total, 'Content-Length'] as const) : ctx.expectedSize !== undefined ? ([ctx.expectedSize, 'sizeBytes'] as const) : undefined;
  if (announced === undefined) {
    const max = ctx.maxBytes;
    return {
      max,
      refuse: (arrived) =>
        new DigestMismatchError(
          'AIRLOCK_TOO_LARGE',
          `${safeUrl(ctx.url)} sent more than the ${max} bytes allowed (${ctx.maxBytesName ?? 'the archive size limit'}) without announcing a size: ${arrived} bytes had arrived; stopped and removed the partial download`,
          { subject: safeUrl(ctx.url), limit: max, actual: arrived },
        ),
    };
  }
  const [max, what] = announced;
  return {
    max,
    refuse: (arrived) =>
      new DigestMismatchError(
        'AIRLOCK_SIZE_MISMATCH',
        `${safeUrl(ctx.url)} sent more than the ${max} bytes announced (${what}) for the archive: ${arrived} bytes had arrived; stopped and removed the partial download`,
        { subject: safeUrl(ctx.url), expected: max, actual: arrived },
      ),
  };
}

/** A length the object host announces above the bound is refused before a byte of the body is read (download.ts checks sizeBytes before any request). */
function checkAnnounced(ctx: AttemptContext, s: PartState): void {
  if (s.total !== undefined && s.total > ctx.maxBytes) {
    throw new DigestMismatchError(
      'AIRLOCK_TOO_LARGE',
      `${safeUrl(ctx.url)} announces ${s.total} bytes (Content-Length), more than the ${ctx.maxBytes} allowed (${ctx.maxBytesName ?? 'the archive size limit'}); nothing was downloaded`,
      { subject: safeUrl(ctx.url), limit: ctx.maxBytes, announced: s.total },
    );
  }
}

/**
 * One GET of the object: resume with `Range` + `If-Range` (RFC 9110 §14.2, §13.1.5) when there
 * are bytes on disk and a strong validator, stream the body into the part, and say what to do
 * next. Never sends an Authorization header: the link is presigned, and the API key must never
 * reach the object host. Mutates `s` (have, digests, identity).
 */
export async function attempt(ctx: AttemptContext, s: PartState): Promise<Outcome> {
  // A per-attempt signal, unlinked when the attempt ends: an abort that comes after the body was
  // consumed must not reach undici's finished request (it would surface as an unhandled error).
  const ac = new AbortController();
  const relay = () => ac.abort(ctx.signal?.reason);
  if (ctx.signal?.aborted) relay();
  ctx.signal?.addEventListener('abort', relay, { once: true });
  try {
    return await attemptWith(ctx, s, ac.signal);
  } finally {
    ctx.signal?.removeEventListener('abort', relay);
  }
}

async function attemptWith(ctx: AttemptContext, s: PartState, signal: AbortSignal): Promise<Outcome> {
  const resuming = s.have > 0 && s.etag !== undefined;
  const headers: Record<string, string> = resuming ? { range: `bytes=${s.have}-`, 'if-range': s.etag! } : {};
  let res: Response;
  // Failures said in our words (upstream/net-error.ts): the host only, never the link's query.
  const net: NetContext = { url: ctx.url, headersTimeoutMs: ctx.headersTimeoutMs, bodyTimeoutMs: ctx.bodyTimeoutMs };
  const failed = (err: unknown, body = false): Outcome => {
    if (ctx.signal?.aborted) throw err;
    const f = describeNetError(err, net);
    if (f?.transient) return { kind: 'retry', reason: f.reason };
    // While the body streams, the sink's own failures (ENOSPC: kept for a resume) pass as they are.
    if (!f && body) throw err;
    throw netError(err, { ...net, subject: safeUrl(ctx.url) });
  };
  try {
    res = await get(ctx.url, { headers, dispatcher: ctx.dispatcher, signal, bodyTimeout: ctx.bodyTimeoutMs, headersTimeout: ctx.headersTimeoutMs });
  } catch (err) {
    return failed(err);
  }
  const h = res.headers as HeaderBag;
  const { status } = res;
  const badLine = describeStatusLine(status, res.statusText, net);
  if (badLine) {
    res.discard();
    throw new UpstreamError(badLine.reason, status, { subject: safeUrl(ctx.url) }, badLine.code);
  }

  if (status === 416) {
    await res.text();
    const cr = parseContentRange(header(h, 'content-range'));
    // Everything is already here (a re-run after the last byte landed): RFC 9110 §15.5.17.
    if (resuming && (cr?.total ?? s.total) === s.have) return { kind: 'complete' };
    return { kind: 'restart', reason: `416 for bytes=${s.have}-` };
  }
  if (status === 200 || status === 206) {
    let start = 0;
    let saved: Promise<unknown> = Promise.resolve(undefined);
    if (status === 206) {
      const cr = parseContentRange(header(h, 'content-range'));
      const etag = strongEtag(h);
      // A 206 that does not continue exactly where we are, or for another object, cannot be spliced.
      if (
        !resuming ||
        !cr ||
        cr.start !== s.have ||
        (etag !== undefined && etag !== s.etag) ||
        (s.total !== undefined && cr.total !== undefined && cr.total !== s.total)
      ) {
        res.discard();
        return { kind: 'restart', reason: `206 with Content-Range ${header(h, 'content-range') ?? '(none)'} for bytes=${s.have}-` };
      }
      start = s.have;
      s.total ??= cr.total;
      s.statedSha256 ??= statedSha256(h);
    } else {
      // 200: the whole object, either first contact or If-Range said the object changed (§13.1.5).
      s.have = 0;
      s.etag = strongEtag(h);
      s.total = contentLength(h);
      s.statedSha256 = statedSha256(h);
      s.digests = new Digests();
      try {
        // Not awaited before reading: an error on the socket destroys the body with whatever it
        // buffered, so the body is drained at once and the sidecar written alongside (a crash in
        // between leaves a part without sidecar, which the next run discards: safe).
        saved = ctx.onIdentity(s).then(
          () => undefined,
          (err: unknown) => err ?? new Error('sidecar write failed'),
        );
      } catch (err) {
        res.discard();
        throw err;
      }
    }
    let sink: PartSink;
    try {
      checkAnnounced(ctx, s);
      sink = await PartSink.open(ctx.partPath, start, s.digests, { openFile: ctx.openFile, onBytes: ctx.onBytes, cap: capOf(ctx, s) });
    } catch (err) {
      res.discard();
      await saved;
      throw err;
    }
    // The bytes that arrived are written (and hashed) even when the connection broke, so a resume
    // starts after them; the sidecar write is settled whatever happens, so a re-run never races it.
    const broken = await res.pipe(sink);
    await sink.close().finally(async () => {
      s.have = sink.written;
      await saved;
    });
    const sidecarErr = await saved;
    if (sidecarErr !== undefined) throw sidecarErr;
    if (broken !== undefined) return failed(broken, true);
    // A close-delimited body that ended early is a broken connection, not a complete object.
    if (s.total !== undefined && s.have < s.total) return { kind: 'retry', reason: `body ended at ${s.have} of ${s.total} bytes` };
    return { kind: 'complete' };
  }
  const text = await res.text();
  if (isExpiredLinkAnswer(status, text)) return { kind: 'expired' };
  if (RETRY_STATUS.has(status)) return { kind: 'retry', reason: `HTTP ${status}`, retryAfter: parseRetryAfter(header(h, 'retry-after')) };
  const code = /<Code>([^<]{1,64})<\/Code>/.exec(text)?.[1];
  throw new UpstreamError(
    `object storage answered ${status}${code ? ` ${code}` : ''} for ${safeUrl(ctx.url)}`,
    status,
    { subject: safeUrl(ctx.url) },
    'AIRLOCK_DOWNLOAD_REFUSED',
  );
}
