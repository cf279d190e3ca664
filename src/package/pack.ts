import { refuseExistingVolumes, splitWritten } from './volumes/split-written.js';
import type { SplitResult } from './volumes/write.js';
import type { KeyObject } from 'node:crypto';
import { access, mkdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { MalformedError, UsageError } from '../errors.js';
import { scanArchive, type ArchiveFormat, type ArchiveLimits, type ScanResult } from '../archive/index.js';
import { fingerprint } from './keys.js';
import { VERSION_LABEL, checkDomain, checkLabel, timeLabel } from './label.js';
import { MANIFEST_FORMAT, STORE_IDENTITY, type Manifest } from './manifest.js';
import type { VendorRecord } from './vendor.js';
import { countPages } from './pages.js';
import { sniff } from './sniff.js';
import { BLOCK } from './tar-header.js';
import { describeFsError, faultOf, openRegularFile, removeEmptyUpTo, type FileFault } from '../util/fsx.js';
import { outputExists, writePackage } from './writer.js';

/** The package member name for each format (the package format), whatever the archive file was called. */
export const MEMBER: Record<ArchiveFormat, string> = { 'tar.gz': 'bundle.tar.gz', tar: 'bundle.tar', zip: 'bundle.zip' };

export interface PackageMeta {
  domain: string;
  version: string;
  jobId: string | null;
  pageCount: number | null;
  expiresAt?: string;
  audience?: string;
}

/** Third-party files to carry (collected by src/fetch/vendor after the archive was verified). */
export interface VendoredFiles {
  records: VendorRecord[];
  bytes: ReadonlyMap<string, Buffer>;
}
/** Collects them from the verified archive; `pack --vendor` passes src/fetch/vendor's collector. */
export type VendorCollector = (archivePath: string, scan: ScanResult) => Promise<VendoredFiles>;

/** The file name both fetch and pack write: `<out>/<domain>-<version>.airlock`. */
export const packagePath = (outDir: string, domain: string, version: string): string => join(outDir, `${domain}-${version}.airlock`);

/**
 * The one path from a scanned export archive to a package, shared by `fetch` (scan alongside the
 * download) and `pack` (an archive obtained another way): the manifest is the scan's own record
 * (every file's sha256, the archive's sha256), and writePackage re-hashes the archive as it
 * copies it, so a file changed since the scan is refused. Never replaces an existing outPath.
 */
export async function writeScannedPackage(o: {
  outPath: string;
  archivePath: string;
  scan: ScanResult;
  meta: PackageMeta;
  signKey?: KeyObject;
  vendor?: VendoredFiles;
  signal?: AbortSignal;
}): Promise<{ path: string; sha256: string; manifest: Manifest }> {
  const { scan, meta } = o;
  const now = new Date();
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    domain: meta.domain,
    version: meta.version,
    jobId: meta.jobId,
    createdAt: now.toISOString(),
    // The service's count when it gave one; else the HTML pages of the file list (known: every file is listed).
    pageCount: meta.pageCount ?? countPages(scan.files),
    archive: { name: MEMBER[scan.format], format: scan.format, size: scan.archiveSize, sha256: scan.archiveSha256 },
    files: scan.files,
    // The creation time in ms orders packages of one domain (no downgrade, no replay).
    sequence: now.getTime(),
    ...(meta.expiresAt ? { expiresAt: meta.expiresAt } : {}),
    ...(meta.audience ? { audience: meta.audience } : {}),
    ...(o.vendor && o.vendor.records.length > 0 ? { vendor: o.vendor.records } : {}),
  };
  const written = await writePackage({
    outPath: o.outPath,
    manifest,
    archivePath: o.archivePath,
    signKey: o.signKey,
    exclusive: true,
    vendorBytes: o.vendor?.bytes,
    signal: o.signal,
  });
  return { ...written, manifest };
}

export interface PackOptions {
  archivePath: string;
  domain: string;
  version?: string;
  outDir: string;
  signKey?: KeyObject;
  limits?: Partial<ArchiveLimits>;
  expiresAt?: string;
  audience?: string;
  vendor?: VendorCollector;
  /** A stop asked for (pack's signal trap): nothing is written, and a folder pack created is removed. */
  signal?: AbortSignal;
  /**
   * Split the package into volumes of at most this many bytes (--split): a volume name already
   * taken is refused first; stopped while splitting, the package goes too (nothing is left).
   */
  split?: number;
}
export interface PackSummary {
  package: string;
  version: string;
  domain: string;
  sha256: string;
  archive: Manifest['archive'];
  files: number;
  bytes: number;
  signed: boolean;
  signer: string | null;
  /** How many third-party files are carried (with --vendor). */
  vendored?: number;
  /** The volumes, with --split (the package then no longer exists as one file). */
  volumes: SplitResult | null;
}

const ARCHIVE_ADVICE: Record<FileFault, string> = {
  missing: 'check the path of the export archive (tar.gz, tgz, tar or zip)',
  folder: 'give the export archive itself (tar.gz, tgz, tar or zip); pack takes an archive, not a site folder',
  'not-regular': 'give the export archive as a regular file (tar.gz, tgz, tar or zip)',
  denied: 'run as a user that may read it, or give a copy this user can read',
  'too-big': 'give the export archive (tar.gz, tgz, tar or zip)',
  unreadable: 'check the file and the disk, then try again',
};
const archiveRefusal = (path: string) => (why: string, fault: FileFault) =>
  new UsageError(`archive ${path} ${why}; ${ARCHIVE_ADVICE[fault]}`, { subject: path });

async function archiveFile(path: string): Promise<{ mtime: Date }> {
  const st = await stat(path).catch((err: unknown) => {
    throw archiveRefusal(path)(describeFsError(err), faultOf(err));
  });
  if (st.isDirectory()) throw archiveRefusal(path)('is a folder', 'folder');
  if (!st.isFile()) throw archiveRefusal(path)('is not a regular file', 'not-regular');
  return st;
}

/** The default label: the archive file's modification time, `YYYYMMDD-HHMMSS` UTC (a re-run gives the same name). */
function defaultLabel(mtime: Date): string {
  const label = Number.isNaN(mtime.getTime()) ? '' : timeLabel(mtime);
  return VERSION_LABEL.test(label) ? label : timeLabel(new Date());
}

async function head(path: string): Promise<Buffer> {
  const fh = await openRegularFile(path, archiveRefusal(path));
  try {
    const buf = Buffer.alloc(BLOCK);
    const { bytesRead } = await fh.read(buf, 0, BLOCK, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * `airlock pack`: an export archive obtained another way (dashboard, CI, a values-file download)
 * → every archive-safety rule and every digest (one scan) → manifest → package, optionally
 * signed, written atomically. Flags and an existing output are refused before the archive is read.
 */
export async function packArchive(o: PackOptions): Promise<PackSummary> {
  const domain = checkDomain(o.domain);
  if (o.expiresAt !== undefined && !(/^\d{4}-\d\d-\d\dT/.test(o.expiresAt) && Number.isFinite(Date.parse(o.expiresAt))))
    throw new UsageError(`--expires-at must be an RFC 3339 time like 2026-12-31T00:00:00Z, got ${JSON.stringify(o.expiresAt)}`, { subject: '--expires-at' });
  if (o.expiresAt !== undefined && Date.parse(o.expiresAt) <= Date.now())
    throw new UsageError(
      `--expires-at ${JSON.stringify(o.expiresAt)} is not in the future: the package would be born expired, and every store would refuse it`,
      { subject: '--expires-at' },
    );
  if (o.audience !== undefined && !STORE_IDENTITY.test(o.audience))
    throw new UsageError(`--audience must match ${STORE_IDENTITY.source}, got ${JSON.stringify(o.audience)}`, { subject: '--audience' });
  if (o.version !== undefined) checkLabel(o.version);
  const archivePath = resolve(o.archivePath);
  const { mtime } = await archiveFile(archivePath);
  const version = o.version ?? defaultLabel(mtime);
  const outDir = resolve(o.outDir);
  const outPath = packagePath(outDir, domain, version);
  if (
    await access(outPath).then(
      () => true,
      () => false,
    )
  )
    throw outputExists(outPath, 'remove it or choose another --version-label');
  if (o.split !== undefined) await refuseExistingVolumes(outPath);
  if (sniff(await head(archivePath)).kind === 'package') {
    throw new MalformedError('AIRLOCK_ALREADY_A_PACKAGE', `${archivePath} is already an .airlock package; verify or import it as it is`, {
      subject: archivePath,
    });
  }
  const outIsFolder = await stat(outDir).then(
    (st) => st.isDirectory(),
    () => null,
  );
  if (outIsFolder === false) throw new UsageError(`the output folder ${outDir} is not a folder`, { subject: outDir });
  const scan = await scanArchive({ path: archivePath }, { limits: o.limits, signal: o.signal });
  // Created only now, so a refused archive leaves no trace, not even an empty folder.
  const created = await mkdir(outDir, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot create the output folder ${outDir}: ${describeFsError(err, 'write')}; choose another --out`, { subject: outDir });
  });
  const meta: PackageMeta = { domain, version, jobId: null, pageCount: null, expiresAt: o.expiresAt, audience: o.audience };
  let written: Awaited<ReturnType<typeof writeScannedPackage>>;
  let vendor: VendoredFiles | undefined;
  let volumes: SplitResult | null = null;
  try {
    vendor = o.vendor ? await o.vendor(archivePath, scan) : undefined;
    written = await writeScannedPackage({ outPath, archivePath, scan, meta, signKey: o.signKey, vendor, signal: o.signal });
    if (o.split !== undefined) {
      const whole = written.path;
      volumes = await splitWritten(whole, o.split, o.signKey, o.signal).catch(async (err: unknown) => {
        // The volumes are what was asked for: stopped while splitting, the package they come from goes too.
        if (o.signal?.aborted) await rm(whole, { force: true });
        throw err;
      });
    }
  } catch (err) {
    if (created !== undefined) await removeEmptyUpTo(outDir, created); // a refused or interrupted pack leaves no new folder
    throw err;
  }
  return {
    package: written.path,
    version,
    domain,
    sha256: written.sha256,
    archive: written.manifest.archive,
    files: scan.files.length,
    bytes: scan.files.reduce((n, f) => n + f.size, 0),
    signed: Boolean(o.signKey),
    signer: o.signKey ? fingerprint(o.signKey) : null,
    ...(vendor ? { vendored: vendor.records.length } : {}),
    volumes,
  };
}
