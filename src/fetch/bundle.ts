import { createHash, type KeyObject } from 'node:crypto';
import { mkdir, open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AirlockError, DigestMismatchError, MalformedError, SignatureError } from '../errors.js';
import { detectFormat, DETECT_BYTES, scanArchive, type ArchiveFormat } from '../archive/index.js';
import { download, type DownloadProgress } from './download.js';
import type { DownloadLimits } from './bounds.js';
import { removePart } from './sidecar.js';
import { fmtBytes } from '../util/units.js';
import { countPages, loadPublicKey, readPackage, writePackage, type Manifest } from '../package/index.js';

/**
 * Download the bundle at `url` and hand it, as a package, to `importInto` (I/O). The link may serve
 * a raw export archive (the service's presigned links do) or an `.airlock` package (a mirror's
 * package link, or one put up by hand). Partial downloads live in S/downloads/ keyed by the URL
 * without its query, so a restart with a fresh presigned link of the same object resumes.
 * The import itself is the store's (src/store/bundle-install.ts passes it in): the fetch side
 * downloads and packages, and never writes a version.
 */
export interface BundleOptions {
  url: string;
  store: string;
  label?: string;
  /** Who expects `label`, for a package of another version (default: the values file's pin). */
  labelFrom?: string;
  domain?: string;
  /** A library's site: a package must be of this domain (a raw archive is made one of it). */
  site?: string;
  /** The sha256 the link's issuer stated (a mirror's packageSha256): the download must have it. */
  sha256?: string;
  trust: string[];
  allowUnsigned: boolean;
  log: (line: string) => void;
  signal?: AbortSignal;
  /** Download progress (the CLI's shared reporter). */
  onProgress?: (p: DownloadProgress) => void;
  /** Bounds of the download (DEFAULT_DOWNLOAD_LIMITS where not given). */
  limits?: Partial<DownloadLimits>;
  /** The most bytes the download may bring, announced or not (default: the archive limits' bound). */
  maxBytes?: number;
}

/** Imports the package the bundle is, or was made into, with the trust it is to be checked against. */
export type ImportInto<R> = (pkg: string, trust: { trust: KeyObject[]; allowUnsigned: boolean }) => Promise<R>;

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

/**
 * The part file and the package made from it are this module's own files; an operator knows the
 * bundle by its link. A refusal that names either names the link instead.
 */
function namedByLink(e: unknown, files: readonly string[], link: string): unknown {
  if (!(e instanceof AirlockError)) return e;
  // A bundle's keys come from the values file, not from a flag.
  e.message = e.message.replace('pass --trust PUBFILE', 'add it to staticExport.trust in the values file');
  for (const f of files) {
    e.message = e.message.replaceAll(JSON.stringify(f), JSON.stringify(link)).replaceAll(f, link);
    if (e.details.subject === f) e.details.subject = link;
  }
  return e;
}

/**
 * One partial download is kept for a resume: the current link's. Parts of links no longer
 * configured (each could have grown to the size bound) are removed, so downloads/ stays bounded.
 */
async function removeOtherParts(dir: string, keep: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (name !== keep && /^[0-9a-f]{16}\.part$/.test(name)) await removePart(join(dir, name));
  }
}

export async function fetchBundle<R extends object>(o: BundleOptions, importInto: ImportInto<R>): Promise<R & { form: 'package' | 'archive'; bytes: number }> {
  const dir = join(o.store, 'downloads');
  await mkdir(dir, { recursive: true });
  const u = new URL(o.url);
  const key = createHash('sha256')
    .update(u.origin + u.pathname)
    .digest('hex')
    .slice(0, 16);
  const part = join(dir, `${key}.part`);
  await removeOtherParts(dir, `${key}.part`);
  const safe = `${u.origin}${u.pathname}`; // never log the query: it is the link's credential
  o.log(`airlock serve: downloading the bundle from ${safe}`);
  const dl = await download({
    url: o.url,
    partPath: part,
    retry: RETRY,
    signal: o.signal,
    onProgress: o.onProgress,
    limits: o.limits,
    maxBytes: o.maxBytes,
    limitNames: {
      rate: 'staticExport.download.minBytesPerSecond, rateWindowSeconds',
      total: 'staticExport.download.timeoutSeconds',
      size: 'staticExport.download.maxBytes',
    },
  });
  o.log(`airlock serve: downloaded ${fmtBytes(dl.size)} (sha256 ${dl.sha256})`);
  if (o.sha256 !== undefined && o.sha256 !== dl.sha256) {
    if (!o.signal?.aborted) await removePart(part);
    throw new DigestMismatchError('AIRLOCK_SHA256_MISMATCH', `the package downloaded from ${safe} has sha256 ${dl.sha256}, but the mirror stated ${o.sha256}`, {
      subject: safe,
    });
  }
  const trust = await Promise.all(o.trust.map((p) => loadPublicKey(p)));
  const pkg = join(dir, `${key}.airlock`);
  try {
    if (await isPackage(part)) {
      const layout = await readPackage(part);
      if (o.label !== undefined && layout.manifest.version !== o.label) {
        throw new MalformedError(
          'AIRLOCK_VERSION_MISMATCH',
          `the package at ${safe} is version ${layout.manifest.version}, but ${o.labelFrom ?? 'staticExport.version pins'} ${o.label}`,
          { subject: o.labelFrom === undefined ? 'staticExport.version' : safe },
        );
      }
      if (o.site !== undefined && layout.manifest.domain !== o.site)
        throw new MalformedError('AIRLOCK_DOMAIN_MISMATCH', `the package at ${safe} is of domain ${layout.manifest.domain}, not of site ${o.site}`, {
          subject: 'airlock.json',
        });
      // the store's import verifies everything (signature against trust + the store's trusted-keys, digests, safety).
      const r = await importInto(part, { trust, allowUnsigned: o.allowUnsigned });
      return { ...r, form: 'package' as const, bytes: dl.size };
    }
    // Not a package: an archive, or nothing airlock can serve (a sign-in page, an error page), said as such.
    const head = Buffer.alloc(DETECT_BYTES);
    const fh = await open(part, 'r');
    const got = await fh.read(head, 0, DETECT_BYTES, 0).finally(() => fh.close());
    detectFormat(head.subarray(0, got.bytesRead), safe);
    if (!o.allowUnsigned) {
      throw new SignatureError(
        'AIRLOCK_UNSIGNED',
        `the bundle at ${safe} is a raw export archive, which is unsigned by nature; set staticExport.allowUnsigned: true to accept it on TLS and the link's size/digest checks, or serve a signed .airlock package`,
        { subject: 'staticExport.allowUnsigned' },
      );
    }
    const scan = await scanArchive({ path: part });
    if (scan.archiveSha256 !== dl.sha256)
      throw new DigestMismatchError('AIRLOCK_ARCHIVE_CHANGED', `the bundle downloaded from ${safe} changed between download and verification`, {
        subject: safe,
      });
    const label = o.label ?? `bundle-${scan.archiveSha256.slice(0, 12)}`;
    const manifest: Manifest = {
      format: 'airlock-package/1',
      domain: o.site ?? o.domain ?? u.hostname,
      version: label,
      jobId: null,
      createdAt: new Date().toISOString(),
      pageCount: countPages(scan.files),
      archive: { name: MEMBER[scan.format], format: scan.format, size: scan.archiveSize, sha256: scan.archiveSha256 },
      files: scan.files,
    };
    await writePackage({ outPath: pkg, manifest, archivePath: part });
    try {
      const r = await importInto(pkg, { trust: [], allowUnsigned: true });
      return { ...r, form: 'archive' as const, bytes: dl.size };
    } finally {
      await rm(pkg, { force: true });
    }
  } catch (e) {
    throw namedByLink(e, [part, pkg], safe);
  } finally {
    // Verified or refused, the download has served its purpose; only an interrupted one is kept.
    if (!o.signal?.aborted) await removePart(part);
  }
}
