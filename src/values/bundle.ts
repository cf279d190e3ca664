import { createHash } from 'node:crypto';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DigestMismatchError, MalformedError, SignatureError, UpstreamError } from '../errors.js';
import { scanArchive, type ArchiveFormat } from '../archive/index.js';
import { download, removePart, type DownloadProgress } from '../fetch/index.js';
import { fmtBytes } from '../util/units.js';
import { countPages, loadPublicKey, readPackage, writePackage, type Manifest } from '../package/index.js';
import { importPackage } from '../store/index.js';

/**
 * Download the bundle at `url` and add it to the store (I/O). The link may serve a raw export
 * archive (the service's presigned links do) or an `.airlock` package (a mirror's package link,
 * or one put up by hand). Partial downloads live in S/downloads/ keyed by the URL without its
 * query, so a restart with a fresh presigned link of the same object resumes.
 */
export interface InstallOptions {
  url: string; store: string; label?: string; domain?: string; trust: string[]; allowUnsigned: boolean;
  activate: boolean; log: (line: string) => void;
  signal?: AbortSignal;
  /** Download progress (the CLI's shared reporter). */
  onProgress?: (p: DownloadProgress) => void;
  /** Freshness rules to override (importPackage's allowDowngrade; recorded in the audit log). */
  allowDowngrade?: readonly string[];
  /** Bounds of the download (DEFAULT_DOWNLOAD_LIMITS where not given). */
  limits?: Partial<DownloadLimits>;
}

/**
 * A slow or stalled bundle server must not hold a replica for minutes: response headers within
 * `headersTimeoutMs` (per request), at least `minBytesPerSecond` over every `rateWindowMs` (the
 * whole download, retries and their waits included), and the whole download within `totalMs`.
 * Values keys staticExport.download.* (docs/values, docs/mirror.md); a part downloaded so far is kept,
 * so the next start resumes it.
 */
export interface DownloadLimits { headersTimeoutMs: number; minBytesPerSecond: number; rateWindowMs: number; totalMs: number }
export const DEFAULT_DOWNLOAD_LIMITS: DownloadLimits = { headersTimeoutMs: 30_000, minBytesPerSecond: 1024, rateWindowMs: 30_000, totalMs: 3_600_000 };

const secs = (ms: number) => `${+(ms / 1000).toFixed(3)} s`;
const rate = (bps: number) => (bps >= 1024 ? `${+(bps / 1024).toFixed(1)} KiB/s` : `${Math.floor(bps)} B/s`);

/**
 * A signal that aborts, with an UpstreamError as its reason, when the download goes under the
 * minimum rate over a window or past the overall deadline. `seen(bytes)` reports progress.
 */
function watchdog(l: DownloadLimits, origin: string): { signal: AbortSignal; seen(bytes: number): void; stop(): void } {
  const ac = new AbortController();
  const t0 = performance.now();
  let bytes = 0;
  const samples: Array<{ at: number; bytes: number }> = [{ at: t0, bytes: 0 }];
  const stepMs = Math.max(10, Math.min(1_000, l.rateWindowMs / 10));
  const tick = setInterval(() => {
    const now = performance.now();
    samples.push({ at: now, bytes });
    while (samples.length > 1 && samples[1]!.at <= now - l.rateWindowMs) samples.shift();
    const first = samples[0]!;
    if (l.minBytesPerSecond > 0 && now - first.at >= l.rateWindowMs) {
      const got = bytes - first.bytes;
      const bps = got / ((now - first.at) / 1000);
      if (bps < l.minBytesPerSecond) {
        ac.abort(new UpstreamError(`the bundle download from ${origin} went under ${rate(l.minBytesPerSecond)} for ${secs(l.rateWindowMs)} (${got} bytes came in that time); gave up (staticExport.download.minBytesPerSecond, rateWindowSeconds)`, undefined, { subject: origin }, 'AIRLOCK_DOWNLOAD_TOO_SLOW'));
      }
    }
  }, stepMs);
  const deadline = setTimeout(() => {
    ac.abort(new UpstreamError(`the bundle download from ${origin} did not finish within ${secs(l.totalMs)}; gave up (staticExport.download.timeoutSeconds)`, undefined, { subject: origin }, 'AIRLOCK_DOWNLOAD_TIMEOUT'));
  }, l.totalMs);
  tick.unref();
  deadline.unref();
  const stop = () => { clearInterval(tick); clearTimeout(deadline); };
  ac.signal.addEventListener('abort', stop, { once: true });
  return { signal: ac.signal, seen: (b) => { bytes = b; }, stop };
}
export interface Installed { version: string; status: 'imported' | 'unchanged'; form: 'package' | 'archive'; bytes: number }

const MEMBER: Record<ArchiveFormat, string> = { 'tar.gz': 'bundle.tar.gz', tar: 'bundle.tar', zip: 'bundle.zip' };
const RETRY = { retries: 4, baseMs: 250, maxMs: 4_000 };

/** A package starts with a ustar header whose name is airlock.json (the package format). */
async function isPackage(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await fh.read(head, 0, 512, 0);
    return bytesRead === 512 && head.subarray(0, 13).equals(Buffer.from('airlock.json\0')) && head.subarray(257, 262).toString('latin1') === 'ustar';
  } finally {
    await fh.close();
  }
}

export async function installBundle(o: InstallOptions): Promise<Installed> {
  const dir = join(o.store, 'downloads');
  await mkdir(dir, { recursive: true });
  const u = new URL(o.url);
  const key = createHash('sha256').update(u.origin + u.pathname).digest('hex').slice(0, 16);
  const part = join(dir, `${key}.part`);
  const safe = `${u.origin}${u.pathname}`; // never log the query: it is the link's credential
  o.log(`airlock serve: downloading the bundle from ${safe}`);
  const given = Object.fromEntries(Object.entries(o.limits ?? {}).filter(([, v]) => v !== undefined));
  const limits: DownloadLimits = { ...DEFAULT_DOWNLOAD_LIMITS, ...given };
  const dog = watchdog(limits, u.origin);
  const signal = o.signal ? AbortSignal.any([o.signal, dog.signal]) : dog.signal;
  let dl;
  try {
    dl = await download({
      url: o.url, partPath: part, retry: RETRY, signal, headersTimeoutMs: limits.headersTimeoutMs,
      onProgress: (p) => { dog.seen(p.bytes); o.onProgress?.(p); },
    });
  } catch (err) {
    // Our own bound, not the caller's stop: its words, not "interrupted" (the part is kept either way).
    if (dog.signal.aborted && !o.signal?.aborted) throw dog.signal.reason;
    throw err;
  } finally {
    dog.stop();
  }
  o.log(`airlock serve: downloaded ${fmtBytes(dl.size)} (sha256 ${dl.sha256})`);
  const trust = await Promise.all(o.trust.map((p) => loadPublicKey(p)));
  try {
    if (await isPackage(part)) {
      const layout = await readPackage(part);
      if (o.label !== undefined && layout.manifest.version !== o.label) {
        throw new MalformedError('AIRLOCK_VERSION_MISMATCH', `the package at ${safe} is version ${layout.manifest.version}, but staticExport.version pins ${o.label}`, { subject: 'staticExport.version' });
      }
      // importPackage verifies everything (signature against trust + the store's trusted-keys, digests, safety).
      const r = await importPackage(part, { store: o.store, trust, allowUnsigned: o.allowUnsigned, activate: o.activate, signal: o.signal, allowDowngrade: o.allowDowngrade });
      return { ...r, form: 'package', bytes: dl.size };
    }
    if (!o.allowUnsigned) {
      throw new SignatureError('AIRLOCK_UNSIGNED', `the bundle at ${safe} is a raw export archive, which is unsigned by nature; set staticExport.allowUnsigned: true to accept it on TLS and the link's size/digest checks, or serve a signed .airlock package`, { subject: 'staticExport.allowUnsigned' });
    }
    const scan = await scanArchive({ path: part });
    if (scan.archiveSha256 !== dl.sha256) throw new DigestMismatchError('AIRLOCK_ARCHIVE_CHANGED', `${part} changed between download and verification`, { subject: part });
    const label = o.label ?? `bundle-${scan.archiveSha256.slice(0, 12)}`;
    const manifest: Manifest = {
      format: 'airlock-package/1', domain: o.domain ?? u.hostname, version: label, jobId: null, createdAt: new Date().toISOString(), pageCount: countPages(scan.files),
      archive: { name: MEMBER[scan.format], format: scan.format, size: scan.archiveSize, sha256: scan.archiveSha256 }, files: scan.files,
    };
    const pkg = join(dir, `${key}.airlock`);
    await writePackage({ outPath: pkg, manifest, archivePath: part });
    try {
      const r = await importPackage(pkg, { store: o.store, trust: [], allowUnsigned: true, activate: o.activate, signal: o.signal, allowDowngrade: o.allowDowngrade });
      return { ...r, form: 'archive', bytes: dl.size };
    } finally {
      await rm(pkg, { force: true });
    }
  } finally {
    // Verified or refused, the download has served its purpose; only an interrupted one is kept.
    if (!o.signal?.aborted) await removePart(part);
  }
}
