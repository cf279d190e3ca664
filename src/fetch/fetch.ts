import type { KeyObject } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Dispatcher } from 'undici';
import { DigestMismatchError, UpstreamError, UsageError, VerificationError } from '../errors.js';
import { archiveSizeBound, scanArchive, type ArchiveFormat, type ArchiveLimits } from '../archive/index.js';
import { packagePath, writeScannedPackage, type VendorCollector } from '../package/index.js';
import type { ExportJob } from '../upstream/index.js';
import { download, type DownloadProgress } from './download.js';
import type { DownloadLimits, LimitNames } from './bounds.js';
import { checkDomain, checkLabel, deriveVersionLabel } from './label.js';
import { bundleWhenReady, waitForJob, type ExportApi } from './poll.js';
import type { RetryPolicy } from './retry.js';
import { readSidecar, removePart } from './sidecar.js';
import { fetchPackageForm, packageUrlOf, packageVersionOf } from './package-form.js';
import { checkOutDir, makeOutDir, refuseExisting } from './preflight.js';

export type FetchEvent =
  | { type: 'job'; jobId: string; reused: boolean }
  | { type: 'status'; job: ExportJob }
  /** Once the link is known, before the download: an airlock mirror's original package (kept, signature and all), or a raw archive to package here. */
  | { type: 'form'; form: 'package' | 'archive' }
  | { type: 'download'; progress: DownloadProgress }
  | { type: 'verify'; path: string }
  | { type: 'written'; path: string };

export interface FetchOptions {
  client: ExportApi;
  domain: string;
  jobId?: string;
  outDir: string;
  versionLabel?: string;
  signKey?: KeyObject;
  /** Keys the package form (from an airlock mirror) must be signed by; none: digests and safety only. */
  trust?: KeyObject[];
  pollIntervalMs?: number;
  pollTimeoutMs?: number;
  onEvent?: (e: FetchEvent) => void;
  signal?: AbortSignal;
  dispatcher?: Dispatcher;
  downloadRetry?: RetryPolicy;
  limits?: Partial<ArchiveLimits>;
  /** The download's stall, minimum-rate and overall bounds (bounds.ts), and the options that set them. */
  downloadLimits?: Partial<DownloadLimits>;
  downloadLimitNames?: LimitNames;
  /** Vendoring (`--vendor`): third-party files to carry, collected from the verified archive. */
  vendor?: VendorCollector;
}

export interface FetchSummary {
  package: string;
  version: string;
  domain: string;
  jobId: string;
  archive: { name: string; format: ArchiveFormat; size: number; sha256: string };
  files: number;
  pageCount: number | null;
  /** True only for a signature that holds: made here with --sign-key, or a mirror's checked with --trust. */
  signed: boolean;
  /** 'signed' with --sign-key; a mirror's package: 'verified' (--trust), 'unverified' (signed, nothing checked it) or 'none'. */
  signature: SignatureState;
  /** Fingerprint of the --trust key that verified a mirror's package. */
  signer: string | null;
  resumedBytes: number;
  requests: number;
  freshLinks: number;
  seconds: { total: number; download: number; verify: number };
  /** 'package': the mirror's original package, kept byte for byte (the in-network mirror). */
  form?: 'package' | 'archive';
  /** Vendoring: how many third-party files the package carries (with --vendor). */
  vendored?: number;
}

export type SignatureState = 'signed' | 'verified' | 'unverified' | 'none';

/** The partial download of a domain in outDir: one per domain, so a re-run finds it. */
export const partPathFor = (outDir: string, domain: string): string => join(outDir, `.${domain}.bundle.part`);

/**
 * The job to use: --job; else the job of an interrupted download in outDir (so a plain re-run
 * resumes it) when the service still has it and it has not failed; else a new job.
 */
async function chooseJob(o: FetchOptions, part: string): Promise<{ jobId: string; reused: boolean; job?: ExportJob }> {
  if (o.jobId) return { jobId: o.jobId, reused: true };
  const side = await readSidecar(part);
  if (side?.jobId) {
    const job = await o.client.getExport(side.jobId).catch((err: unknown) => {
      if (err instanceof UpstreamError && err.code === 'AIRLOCK_NOT_FOUND') return undefined;
      throw err;
    });
    if (job && job.status !== 'failed') return { jobId: side.jobId, reused: true, job };
  }
  const job = await o.client.startExport(o.domain);
  return { jobId: job.jobId, reused: false, job };
}

/**
 * `airlock fetch`: export job → poll → bundle link → resumable download into a `.part` →
 * scanArchive (every safety rule, every digest) → manifest → writePackage (atomic, optionally
 * signed). A refused archive leaves no package and no part; an interrupted download keeps its part.
 * Against an airlock mirror, the original package is taken instead (package-form.ts).
 */
export async function fetchPackage(o: FetchOptions): Promise<FetchSummary> {
  const t0 = Date.now();
  o = { ...o, domain: checkDomain(o.domain) }; // the package's domain, in lower case
  if (o.versionLabel !== undefined) checkLabel(o.versionLabel);
  const outDir = resolve(o.outDir);
  const nameFor = (version: string) => packagePath(outDir, o.domain, version);
  const hint = 'remove it or choose another --version-label';
  // Before any request: a fetch that cannot write its package must not export or download first.
  await checkOutDir(outDir);
  if (o.versionLabel !== undefined) await refuseExisting(nameFor(o.versionLabel), hint);
  const part = partPathFor(outDir, o.domain);
  const poll = { intervalMs: o.pollIntervalMs ?? 500, timeoutMs: o.pollTimeoutMs ?? 60 * 60_000, signal: o.signal };

  const { jobId, reused, job: first } = await chooseJob(o, part);
  o.onEvent?.({ type: 'job', jobId, reused });
  // Without --version-label the name comes from the job's creation time: checked as soon as it is
  // known, before waiting for the export. A job complete at once is checked after the link instead,
  // when the form is known (an airlock mirror's package keeps its own version).
  if (o.versionLabel === undefined && first?.createdAt && first.status !== 'completed') await refuseExisting(nameFor(deriveVersionLabel(first)), hint);
  const job = await waitForJob(o.client, jobId, { ...poll, onStatus: (j) => o.onEvent?.({ type: 'status', job: j }) });
  const version = o.versionLabel ?? deriveVersionLabel(job);
  const link = await bundleWhenReady(o.client, jobId, poll);
  const t1 = Date.now();
  // An airlock mirror offers the original package: keep it byte for byte (signature intact), unless we are to sign.
  // (--vendor changes the package, so it too re-packages the raw archive.)
  const packageUrl = o.signKey || o.vendor ? undefined : packageUrlOf(link);
  o.onEvent?.({ type: 'form', form: packageUrl === undefined ? 'archive' : 'package' });
  if (packageUrl !== undefined) {
    const offered = packageVersionOf(link);
    if (offered !== undefined && o.versionLabel !== undefined && offered !== o.versionLabel) {
      throw new UsageError(
        `--version-label ${o.versionLabel}: the mirror's package is version ${offered}, and a signed package cannot be relabelled (pass --sign-key to re-package the raw archive instead)`,
        { subject: '--version-label' },
      );
    }
    if (offered !== undefined) await refuseExisting(nameFor(offered), 'remove it first');
    await makeOutDir(outDir);
    const p = await fetchPackageForm({
      client: o.client,
      jobId,
      domain: o.domain,
      outDir,
      link,
      url: packageUrl,
      versionLabel: o.versionLabel,
      trust: o.trust ?? [],
      limits: o.limits,
      downloadLimits: o.downloadLimits,
      downloadLimitNames: o.downloadLimitNames,
      dispatcher: o.dispatcher,
      downloadRetry: o.downloadRetry,
      signal: o.signal,
      onProgress: (progress) => o.onEvent?.({ type: 'download', progress }),
    });
    o.onEvent?.({ type: 'written', path: p.package });
    const t = (Date.now() - t0) / 1000;
    return {
      package: p.package,
      version: p.version,
      domain: o.domain,
      jobId,
      archive: p.manifest.archive,
      files: p.files,
      pageCount: p.manifest.pageCount,
      signed: p.signature === 'verified',
      signature: p.signature,
      signer: p.signer,
      resumedBytes: p.dl.resumedFrom,
      requests: p.dl.requests,
      freshLinks: p.dl.freshLinks,
      form: 'package',
      seconds: { total: t, download: p.downloadMs / 1000, verify: (Date.now() - t1 - p.downloadMs) / 1000 },
    };
  }
  const outPath = nameFor(version);
  await refuseExisting(outPath, hint);
  await makeOutDir(outDir);
  // The archive scan (every safety rule, every file's digest) runs alongside the read-back of the
  // ETag's MD5, on the other core (download.ts).
  const dl = await download({
    url: link.bundleUrl,
    expiresAt: link.expiresAt,
    partPath: part,
    jobId,
    expectedSize: link.sizeBytes ?? undefined,
    maxBytes: archiveSizeBound(o.limits),
    getFreshUrl: async () => {
      const l = await o.client.getBundle(jobId);
      return { url: l.bundleUrl, expiresAt: l.expiresAt };
    },
    dispatcher: o.dispatcher,
    retry: o.downloadRetry,
    signal: o.signal,
    limits: o.downloadLimits,
    limitNames: o.downloadLimitNames,
    onProgress: (progress) => o.onEvent?.({ type: 'download', progress }),
    alongside: (path) => {
      o.onEvent?.({ type: 'verify', path });
      return scanArchive({ path }, { limits: o.limits });
    },
  }).catch(async (err: unknown) => {
    // An unsafe or malformed archive is worth nothing: no package, no part to resume.
    if (err instanceof VerificationError) await removePart(part);
    throw err;
  });
  const t2 = t1 + dl.bytesMs;
  const scan = dl.alongside!;
  if (scan.archiveSha256 !== dl.sha256 || scan.archiveSize !== dl.size) {
    await removePart(part);
    throw new DigestMismatchError('AIRLOCK_ARCHIVE_CHANGED', `${part} changed between download and verification`, { subject: part });
  }
  const meta = { domain: o.domain, version, jobId, pageCount: job.pageCount ?? null };
  // A vendoring failure leaves the verified part in place: the same command resumes without downloading it again.
  const vendor = o.vendor ? await o.vendor(part, scan) : undefined;
  const { manifest, ...written } = await writeScannedPackage({ outPath, archivePath: part, scan, meta, signKey: o.signKey, vendor });
  await removePart(part);
  o.onEvent?.({ type: 'written', path: written.path });
  const t3 = Date.now();
  return {
    package: written.path,
    version,
    domain: o.domain,
    jobId,
    archive: manifest.archive,
    files: scan.files.length,
    pageCount: manifest.pageCount,
    ...(vendor ? { vendored: vendor.records.length } : {}),
    signed: Boolean(o.signKey),
    signature: o.signKey ? 'signed' : 'none',
    signer: null,
    resumedBytes: dl.resumedFrom,
    requests: dl.requests,
    freshLinks: dl.freshLinks,
    seconds: { total: (t3 - t0) / 1000, download: (t2 - t1) / 1000, verify: (t3 - t2) / 1000 },
  };
}
