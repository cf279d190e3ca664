import { Agent, type Dispatcher } from 'undici';
import { rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AirlockError, DigestMismatchError, EXIT, UpstreamError } from '../errors.js';
import { archiveSizeBound } from '../archive/index.js';
import { fsyncDir } from '../util/fsx.js';
import { attempt, type PartState } from './attempt.js';
import { finalCheck } from './final-check.js';
import { backoffMs, DEFAULT_RETRY, sleep, type RetryPolicy } from './retry.js';
import { partSize, readSidecar, removePart, sidecarPath, writeSidecar } from './sidecar.js';
import { Digests } from './digests.js';
import { rehash, syncPart, type OpenFile } from './sink.js';
import { resolveDownloadLimits, watchdog, type DownloadLimits, type LimitNames } from './bounds.js';
import { safeUrl } from './validators.js';

export interface FreshLink {
  url: string;
  expiresAt?: string | Date;
}
export interface DownloadProgress {
  bytes: number;
  total: number | undefined;
  resumedFrom: number;
}
export interface DownloadOptions<T = undefined> {
  url: string;
  /** Where the verified bytes end up; omitted: they stay in `partPath` (the caller owns it then). */
  dest?: string;
  partPath: string;
  /** Identity of the object besides its ETag, so a part of another job is never reused. */
  jobId?: string | null;
  expiresAt?: string | Date;
  getFreshUrl?: () => Promise<FreshLink>;
  expectedSize?: number;
  /** The most bytes taken when no size is announced (default: the bound of the default archive limits). */
  maxBytes?: number;
  dispatcher?: Dispatcher;
  onProgress?: (p: DownloadProgress) => void;
  signal?: AbortSignal;
  retry?: RetryPolicy;
  /** Stall, minimum-rate and overall bounds (bounds.ts; DEFAULT_DOWNLOAD_LIMITS where not given). */
  limits?: Partial<DownloadLimits>;
  /** The settings a refusal of those bounds names. */
  limitNames?: LimitNames;
  bodyTimeoutMs?: number;
  /** Injected for tests (disk full). */
  openFile?: OpenFile;
  /**
   * The caller's own check of the complete part (the archive scan), run while a worker reads the
   * part back for the ETag's MD5, so the two overlap on two cores. Its error is thrown unless the
   * MD5 also failed: a corrupt transfer explains a bad archive, not the other way round.
   */
  alongside?: (partPath: string) => Promise<T>;
}
export interface DownloadResult<T = undefined> {
  path: string;
  size: number;
  sha256: string;
  md5: string | undefined;
  resumedFrom: number;
  requests: number;
  restarts: number;
  freshLinks: number;
  /** Time to the last byte on disk (hashed, sizes checked), without the MD5 read-back and `alongside`. */
  bytesMs: number;
  alongside: T | undefined;
}

/** Renew a link a little before its stated expiry (clocks differ, a request takes time): 5 s, or a quarter of a short link's life. */
const skewMs = (expiresAt: number, receivedAt: number) => Math.min(5_000, Math.max(0, (expiresAt - receivedAt) / 4));
const MAX_RESTARTS = 3;
const MAX_RENEWALS = 5;

/** The state to start from: the part of an earlier run when its sidecar says it is this job's object, else nothing. */
async function initialState<T>(o: DownloadOptions<T>): Promise<PartState> {
  const side = await readSidecar(o.partPath);
  const have = await partSize(o.partPath);
  if (side && have > 0 && side.jobId === (o.jobId ?? null) && (side.size === null || have <= side.size)) {
    const digests = await rehash(o.partPath, have);
    return { have, etag: side.etag, total: side.size ?? undefined, statedSha256: side.statedSha256 ?? undefined, digests };
  }
  await removePart(o.partPath);
  return { have: 0, etag: undefined, total: undefined, statedSha256: undefined, digests: new Digests() };
}

/**
 * Download a presigned object to `partPath`, resuming across broken connections, expired links
 * and interrupted runs, hashing as bytes arrive with memory bounded by the sink's ring (sink.ts).
 * Throws DigestMismatchError (exit 4) and deletes the part when size or a stated digest is wrong.
 */
export async function download<T = undefined>(o: DownloadOptions<T>): Promise<DownloadResult<T>> {
  // A slow or stalled object host ends the download in its own words, not as "interrupted" (the part is kept either way).
  const dog = watchdog(resolveDownloadLimits(o.limits), new URL(o.url).origin, o.limitNames);
  try {
    return await bounded({ ...o, signal: o.signal ? AbortSignal.any([o.signal, dog.signal]) : dog.signal }, dog);
  } catch (err) {
    if (dog.signal.aborted && !o.signal?.aborted) throw dog.signal.reason;
    throw err;
  } finally {
    dog.stop();
  }
}

async function bounded<T>(o: DownloadOptions<T>, dog: ReturnType<typeof watchdog>): Promise<DownloadResult<T>> {
  const max = o.maxBytes ?? archiveSizeBound(undefined);
  if (o.expectedSize !== undefined && o.expectedSize > max) {
    // Never a download that is already known to pass the archive limits (1e18, above 2^53 included).
    throw new DigestMismatchError(
      'AIRLOCK_TOO_LARGE',
      `the service announced ${o.expectedSize} bytes (sizeBytes) for the archive, more than the ${max} allowed (${o.limitNames?.size ?? 'the archive size limit'}); nothing was downloaded`,
      { subject: safeUrl(o.url), limit: max, announced: o.expectedSize },
    );
  }
  if (o.expectedSize !== undefined && !(Number.isSafeInteger(o.expectedSize) && o.expectedSize >= 0)) {
    // A negative or fractional size is no size any download can have: refused before any request.
    throw new DigestMismatchError(
      'AIRLOCK_SIZE_MISMATCH',
      `the service announced ${o.expectedSize} bytes (sizeBytes) for the archive, which no download can have; nothing was downloaded`,
      { subject: safeUrl(o.url), announced: o.expectedSize },
    );
  }
  const t0 = Date.now();
  const headersTimeoutMs = resolveDownloadLimits(o.limits).headersTimeoutMs;
  const policy = o.retry ?? DEFAULT_RETRY;
  const own = o.dispatcher ? undefined : new Agent({ connect: { timeout: 30_000 } });
  const s = await initialState(o);
  const resumedFrom = s.have;
  let url = o.url;
  let expiresAt = o.expiresAt === undefined ? undefined : new Date(o.expiresAt).getTime();
  let receivedAt = Date.now();
  let requests = 0,
    restarts = 0,
    freshLinks = 0,
    failures = 0,
    renewals = 0;
  const renew = async (why: string) => {
    if (!o.getFreshUrl)
      throw new UpstreamError(`the download link ${why} and no fresh link can be asked for`, undefined, { subject: safeUrl(url) }, 'AIRLOCK_LINK_EXPIRED');
    if (++renewals > MAX_RENEWALS)
      throw new UpstreamError(`the download link ${why} again after ${MAX_RENEWALS} fresh links`, undefined, { subject: safeUrl(url) }, 'AIRLOCK_LINK_EXPIRED');
    const fresh = await o.getFreshUrl();
    url = fresh.url;
    expiresAt = fresh.expiresAt === undefined ? undefined : new Date(fresh.expiresAt).getTime();
    receivedAt = Date.now();
    freshLinks++;
  };
  try {
    for (;;) {
      if (o.signal?.aborted) throw interrupted(o, s.have);
      // Pre-emptive renewal only for a link not yet renewed this way, so a server whose clock is
      // behind ours cannot make us loop: its own 403 decides after that.
      if (expiresAt !== undefined && Date.now() >= expiresAt - skewMs(expiresAt, receivedAt) && renewals === 0) await renew('has expired');
      const before = s.have;
      requests++;
      const out = await attempt(
        {
          url,
          partPath: o.partPath,
          dispatcher: o.dispatcher ?? own!,
          signal: o.signal,
          bodyTimeoutMs: o.bodyTimeoutMs ?? 30_000,
          headersTimeoutMs,
          openFile: o.openFile,
          expectedSize: o.expectedSize,
          maxBytes: max,
          maxBytesName: o.limitNames?.size,
          onBytes: (bytes) => {
            dog.seen(bytes);
            o.onProgress?.({ bytes, total: s.total ?? o.expectedSize, resumedFrom });
          },
          onIdentity: (st) => {
            finalCheck.early(st, o); // synchronous: a wrong size is refused before any byte is read
            // Without a strong ETag a later run could not prove the bytes are the same object: no sidecar, no reuse.
            return st.etag
              ? writeSidecar(o.partPath, {
                  format: 'airlock-part/1',
                  etag: st.etag,
                  size: st.total ?? null,
                  jobId: o.jobId ?? null,
                  statedSha256: st.statedSha256 ?? null,
                })
              : Promise.resolve();
          },
        },
        s,
      ).catch((err: unknown) => {
        throw o.signal?.aborted ? interrupted(o, s.have) : (noSpace(err, o, s.have) ?? err);
      });
      if (s.have > before) {
        failures = 0;
        renewals = 0;
      }
      if (out.kind === 'complete') break;
      if (out.kind === 'expired') {
        await renew('has expired');
        continue;
      }
      if (out.kind === 'restart') {
        if (++restarts > MAX_RESTARTS)
          throw new UpstreamError(
            `the object keeps changing under the download (${out.reason})`,
            undefined,
            { subject: safeUrl(url) },
            'AIRLOCK_DOWNLOAD_UNSTABLE',
          );
        s.have = 0;
        continue;
      }
      if (++failures > policy.retries)
        throw new UpstreamError(
          `download failed after ${policy.retries} retries: ${out.reason}`,
          undefined,
          { subject: safeUrl(url) },
          'AIRLOCK_DOWNLOAD_FAILED',
        );
      await sleep(backoffMs(failures, policy, out.retryAfter), o.signal).catch(() => {
        throw interrupted(o, s.have);
      });
    }
  } catch (err) {
    // Bytes that are proven wrong are worth nothing for a resume; others are kept, durably.
    if (err instanceof DigestMismatchError) await removePart(o.partPath);
    else await syncPart(o.partPath).catch(() => {});
    throw err;
  } finally {
    dog.stop(); // the bytes are here: the checks that follow take as long as they take
    await own?.close();
  }
  let sha256: string;
  try {
    sha256 = finalCheck.last(s, o);
  } catch (err) {
    await removePart(o.partPath);
    throw err;
  }
  const bytesMs = Date.now() - t0;
  const [md5, alongside] = await Promise.allSettled([finalCheck.etag(s, o), o.alongside?.(o.partPath)]);
  if (md5.status === 'rejected') {
    if (md5.reason instanceof DigestMismatchError) await removePart(o.partPath);
    throw md5.reason;
  }
  if (alongside.status === 'rejected') throw alongside.reason;
  let path = o.partPath;
  if (o.dest) {
    await rename(o.partPath, o.dest);
    await fsyncDir(dirname(o.dest));
    await rm(sidecarPath(o.partPath), { force: true });
    path = o.dest;
  }
  return { path, size: s.have, sha256, md5: md5.value, resumedFrom, requests, restarts, freshLinks, bytesMs, alongside: alongside.value };
}

function interrupted(o: DownloadOptions<unknown>, have: number): AirlockError {
  // Before the first byte there is no part file: do not name one.
  const kept =
    have > 0 ? `${have} bytes kept in ${o.partPath} — run the same command again to resume` : 'nothing was downloaded yet — run the same command again';
  return new AirlockError('AIRLOCK_INTERRUPTED', `download interrupted; ${kept}`, EXIT.FAILURE, { subject: o.partPath, bytes: have });
}

/** Disk full: the part holds only whole, hashed bytes (the sink truncates to them), so it is kept for a resume. */
function noSpace(err: unknown, o: DownloadOptions<unknown>, have: number): AirlockError | undefined {
  if ((err as NodeJS.ErrnoException)?.code !== 'ENOSPC') return undefined;
  return new AirlockError(
    'AIRLOCK_NO_SPACE',
    `no space left on device while writing ${o.partPath} (${have} bytes written${o.expectedSize ? ` of ${o.expectedSize}` : ''}); free space and run the same command again to resume`,
    EXIT.FAILURE,
    { subject: o.partPath, bytes: have },
    { cause: err },
  );
}
