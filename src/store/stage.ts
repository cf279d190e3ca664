import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DigestMismatchError, MalformedError } from '../errors.js';
import { extractArchive, probeCaseFolding, type ArchiveLimits } from '../archive/index.js';
import { countPages, readPackage, compareToManifest, verifyVendorMembers, inputPath, type PackageInput, type PackageLayout } from '../package/index.js';
import { fsyncDir, fsyncFile } from '../util/fsx.js';
import { copyHashed } from './copy.js';
import { manifestWatch } from './expect.js';
import { versionPaths } from './paths.js';
import type { VersionMeta } from './meta.js';
import type { ProgressEvent } from './progress.js';

export interface StageInput {
  pkg: PackageInput;
  pkgSize: number;
  layout: PackageLayout;
  signer: string | null;
  /** Trust policy: every signer that counted (kept in version.json when there are several). */
  signers?: string[];
  limits?: Partial<ArchiveLimits>;
  signal?: AbortSignal;
}

/**
 * Build a complete version inside `dir` (a fresh staging folder): the package copy, the site
 * extracted from THAT copy and checked against the manifest, airlock.json and version.json, all
 * fsynced. Extracting from the copy (and re-reading its head) means the bytes verified are the
 * bytes kept, even if the source file is changed while we run (a TOCTOU on removable media).
 * Refusals come as early as the bytes allow: the archive digest right after the copy, an entry
 * the manifest does not promise before it is written. On any failure every write has ended.
 */
export async function stageVersion(dir: string, input: StageInput, onProgress?: (e: ProgressEvent) => void): Promise<VersionMeta> {
  const p = versionPaths(dir);
  const { signal } = input;
  const digests = await copyHashed(input.pkg, p.pkg, input.pkgSize, input.layout.archive, { signal, onProgress });
  const staged = await readPackage(p.pkg);
  if (
    !staged.manifestBytes.equals(input.layout.manifestBytes) ||
    !sameList(staged.signatures, input.layout.signatures) ||
    staged.archive.offset !== input.layout.archive.offset ||
    staged.archive.size !== input.layout.archive.size
  ) {
    throw new MalformedError('AIRLOCK_PACKAGE_CHANGED', `package ${inputPath(input.pkg)} changed while it was being imported`, {
      subject: inputPath(input.pkg),
    });
  }
  const { manifest } = staged;
  if (digests.archiveSha256 !== manifest.archive.sha256) {
    throw new DigestMismatchError(
      'AIRLOCK_ARCHIVE_DIGEST',
      `${staged.archive.name} has sha256 ${digests.archiveSha256} but the manifest says ${manifest.archive.sha256}`,
      { subject: staged.archive.name, expected: manifest.archive.sha256, actual: digests.archiveSha256 },
    );
  }
  onProgress?.({ phase: 'extract', dir: p.site, total: staged.archive.size });
  // Case pairs (rules/A001 beside rules/a001) are refused only if the store's file system folds case.
  const foldsCase = await probeCaseFolding(dir);
  const watch = { watch: manifestWatch(manifest), signal };
  // The copy's archive digest was taken from the bytes as they were written: not hashed again.
  const scan = await extractArchive({ path: p.pkg, offset: staged.archive.offset, length: staged.archive.size }, p.site, {
    limits: input.limits,
    format: manifest.archive.format,
    foldsCase,
    archiveSha256: digests.archiveSha256,
    ...watch,
  });
  compareToManifest(manifest, scan);
  // Vendoring: every vendored file of THE COPY, checked against the signed manifest, then kept as its own file.
  if (staged.vendor.length > 0 || manifest.vendor) {
    await mkdir(p.vendor);
    await verifyVendorMembers(p.pkg, staged, async (r, bytes) => {
      const file = join(p.dir, r.path); // r.path matches VENDOR_PATH: vendor/<hex>.<ext>, nothing else
      await writeFile(file, bytes, { flag: 'wx' });
      await fsyncFile(file);
    });
    await fsyncDir(p.vendor);
  }
  const meta: VersionMeta = {
    label: manifest.version,
    domain: manifest.domain,
    importedAt: new Date().toISOString(),
    packageSha256: digests.packageSha256,
    archive: { name: staged.archive.name, format: scan.format, offset: staged.archive.offset, size: staged.archive.size, sha256: scan.archiveSha256 },
    signer: input.signer,
    ...(input.signers && input.signers.length > 1 ? { signers: input.signers } : {}),
    // A manifest without a count (packed by an older airlock): the file list tells it.
    pageCount: manifest.pageCount ?? countPages(manifest.files),
    fileCount: scan.files.length,
    totalBytes: scan.files.reduce((n, f) => n + f.size, 0),
  };
  await writeFile(p.manifest, staged.manifestBytes, { flag: 'wx' });
  await fsyncFile(p.manifest);
  await writeFile(p.meta, JSON.stringify(meta, null, 2) + '\n', { flag: 'wx' });
  await fsyncFile(p.meta);
  // extractArchive fsyncs every file and folder under site/; the version folder's own entries remain.
  await fsyncDir(p.site);
  await fsyncDir(dir);
  onProgress?.({ phase: 'extracted', files: meta.fileCount, bytes: meta.totalBytes });
  return meta;
}

function sameList(a: readonly Buffer[], b: readonly Buffer[]): boolean {
  return a.length === b.length && a.every((x, i) => x.equals(b[i]!));
}
