import { StoreError } from '../errors.js';
import { hashByteSource } from '../archive/index.js';
import { compareToManifest, verifyVendorMembers, inputRange, type PackageInput, type PackageLayout } from '../package/index.js';
import { readMeta, readStoredManifest, type VersionMeta } from './meta.js';

/** version.json of `dir`, or null when there is no complete version there. */
export async function existingMeta(dir: string): Promise<VersionMeta | null> {
  return readMeta(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
}

/**
 * The package's version is already in the store. Different content → AIRLOCK_VERSION_CONFLICT.
 * Same content → the caller answers "unchanged", but only for a package that `verify` would
 * pass: the archive member of the file actually given is hashed (one read, nothing extracted)
 * and checked against the package's own manifest, and that manifest's file list against the
 * stored version's, which was verified file by file when it was imported. Same archive digest
 * means the same bytes, so those files are this archive's real content; nothing else needs
 * re-reading. A corrupted copy is refused (exit 4) exactly as `verify` would refuse it.
 */
export async function checkSameVersion(pkg: PackageInput, layout: PackageLayout, dir: string, meta: VersionMeta, signal?: AbortSignal): Promise<void> {
  const m = layout.manifest;
  if (meta.archive.sha256 !== m.archive.sha256) {
    throw new StoreError('AIRLOCK_VERSION_CONFLICT', `version ${m.version} is already in the store with different content (archive sha256 ${meta.archive.sha256}, package has ${m.archive.sha256}); choose another version label`, { subject: m.version });
  }
  const stored = await readStoredManifest(dir);
  const archiveSha256 = await hashByteSource(inputRange(pkg, layout.archive.offset, layout.archive.size), signal);
  compareToManifest(m, { format: meta.archive.format, archiveSha256, archiveSize: layout.archive.size, files: stored.files, strip: '' });
  // Issue 17: the same archive with other vendored files is other content; the given copy's vendored bytes must verify too.
  if (JSON.stringify(m.vendor ?? null) !== JSON.stringify(stored.vendor ?? null)) {
    throw new StoreError('AIRLOCK_VERSION_CONFLICT', `version ${m.version} is already in the store with different vendored files; choose another version label`, { subject: m.version });
  }
  await verifyVendorMembers(pkg, layout);
}
