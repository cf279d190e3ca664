import type { KeyObject } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Dispatcher } from 'undici';
import { AirlockError, DigestMismatchError, MalformedError, UsageError, VerificationError } from '../errors.js';
import { archiveSizeBound, scanArchive, type ArchiveLimits } from '../archive/index.js';
import { checkSignature, compareToManifest, packagePath, readPackage, verifyVendorMembers } from '../package/index.js';
import type { BundleLink } from '../upstream/index.js';
import { fsyncDir, publishNew } from '../util/fsx.js';
import { download, type DownloadProgress } from './download.js';
import type { DownloadLimits, LimitNames } from './bounds.js';
import type { ExportApi } from './poll.js';
import type { RetryPolicy } from './retry.js';
import { checkLabel } from './label.js';
import { removePart } from './sidecar.js';
import { safeUrl } from './validators.js';

/**
 * Chained fetch through a mirror: an airlock mirror's bundle answer also offers `packageUrl`, the
 * original `.airlock` package. Taking it keeps the package byte for byte — so the signature made
 * upstream still verifies after any number of hops — where re-packaging the raw archive could
 * not. The real service sends no such field, and fetch then takes the raw archive as before.
 */
export function packageUrlOf(link: BundleLink): string | undefined {
  const u = (link as Record<string, unknown>).packageUrl;
  return typeof u === 'string' && /^https?:\/\//.test(u) ? u : undefined;
}

/** The version an airlock mirror says its package is (so the output name is known before the download), if it is a label. */
export function packageVersionOf(link: BundleLink): string | undefined {
  const v = (link as Record<string, unknown>).version;
  if (typeof v !== 'string') return undefined;
  try {
    return checkLabel(v);
  } catch {
    return undefined;
  }
}

export interface PackageFormOptions {
  client: ExportApi;
  jobId: string;
  domain: string;
  outDir: string;
  link: BundleLink;
  url: string;
  versionLabel?: string;
  trust: KeyObject[];
  limits?: Partial<ArchiveLimits>;
  downloadLimits?: Partial<DownloadLimits>;
  downloadLimitNames?: LimitNames;
  dispatcher?: Dispatcher;
  downloadRetry?: RetryPolicy;
  signal?: AbortSignal;
  onProgress?: (p: DownloadProgress) => void;
}

export async function fetchPackageForm(o: PackageFormOptions) {
  const part = join(o.outDir, `.${o.domain}.package.part`);
  const t0 = Date.now();
  const dl = await download({
    url: o.url,
    expiresAt: o.link.expiresAt,
    partPath: part,
    jobId: o.jobId,
    maxBytes: archiveSizeBound(o.limits),
    limits: o.downloadLimits,
    limitNames: o.downloadLimitNames,
    getFreshUrl: async () => {
      const l = await o.client.getBundle(o.jobId);
      const url = packageUrlOf(l);
      if (!url)
        throw new AirlockError('AIRLOCK_LINK_EXPIRED', `the server stopped offering the package form of job ${o.jobId}; run again`, 1, { subject: o.jobId });
      return { url, expiresAt: l.expiresAt };
    },
    dispatcher: o.dispatcher,
    retry: o.downloadRetry,
    signal: o.signal,
    onProgress: o.onProgress,
  });
  const downloadMs = Date.now() - t0;
  try {
    const stated = (o.link as Record<string, unknown>).packageSha256;
    if (typeof stated === 'string' && stated !== dl.sha256) {
      throw new DigestMismatchError('AIRLOCK_SHA256_MISMATCH', `package from ${safeUrl(o.url)} has sha256 ${dl.sha256}, the bundle answer said ${stated}`, {
        subject: part,
      });
    }
    const layout = await readPackage(part);
    const m = layout.manifest;
    // With --trust, the signature must verify (fail closed); without, digests and safety still do,
    // and a signature nobody checked is reported as such, never as "signed".
    const sig =
      o.trust.length > 0
        ? { signature: 'verified' as const, signer: checkSignature(layout, { trust: o.trust }).signer }
        : { signature: layout.signature !== null ? ('unverified' as const) : ('none' as const), signer: null };
    if (m.domain !== o.domain)
      throw new MalformedError('AIRLOCK_DOMAIN_MISMATCH', `the package offered for ${o.domain} is of domain ${m.domain}`, { subject: 'airlock.json' });
    if (o.versionLabel !== undefined && o.versionLabel !== m.version) {
      throw new UsageError(
        `--version-label ${o.versionLabel}: the mirror's package is version ${m.version}, and a signed package cannot be relabelled (pass --sign-key to re-package the raw archive instead)`,
        { subject: '--version-label' },
      );
    }
    if (layout.archive.size !== m.archive.size)
      throw new DigestMismatchError('AIRLOCK_ARCHIVE_SIZE', `${layout.archive.name} is ${layout.archive.size} bytes but the manifest says ${m.archive.size}`, {
        subject: layout.archive.name,
      });
    const scan = await scanArchive({ path: part, offset: layout.archive.offset, length: layout.archive.size }, { limits: o.limits });
    compareToManifest(m, scan);
    await verifyVendorMembers(part, layout);
    const outPath = packagePath(o.outDir, o.domain, m.version);
    await publishNew(part, outPath); // never replaces a package that is there, even one that appeared meanwhile
    await fsyncDir(dirname(outPath));
    await removePart(part);
    return { package: outPath, version: m.version, manifest: m, ...sig, files: scan.files.length, dl, downloadMs };
  } catch (err) {
    if (err instanceof VerificationError) await removePart(part);
    throw err;
  }
}
