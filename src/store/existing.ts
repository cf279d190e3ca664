import { lstat } from 'node:fs/promises';
import { EXIT, StoreError } from '../errors.js';
import { describeFsError } from '../util/fsx.js';
import { hashByteSource } from '../archive/index.js';
import { compareToManifest, verifyVendorMembers, inputRange, type PackageInput, type PackageLayout } from '../package/index.js';
import { readMeta, readStoredManifest, type VersionMeta } from './meta.js';

/**
 * version.json of `dir`, or null when there is no complete version there. A plain file (or
 * anything but a folder) where the version folder should be is a damaged store: exit 2,
 * AIRLOCK_BAD_VERSION, naming it, in words.
 */
export async function existingMeta(dir: string): Promise<VersionMeta | null> {
  return readMeta(dir).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    if (err.code !== 'ENOTDIR') throw err;
    const st = await lstat(dir).catch(() => null);
    const why = st && !st.isDirectory() ? `is ${st.isSymbolicLink() ? 'a symbolic link' : 'a file'}, not a version folder` : describeFsError(err);
    throw new StoreError(
      'AIRLOCK_BAD_VERSION',
      `${dir} ${why}; the store was damaged or edited by hand (move it out of the store)`,
      { subject: dir },
      EXIT.USAGE,
    );
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
    throw new StoreError(
      'AIRLOCK_VERSION_CONFLICT',
      `version ${m.version} is already in the store with different content (archive sha256 ${meta.archive.sha256}, package has ${m.archive.sha256}); choose another version label`,
      { subject: m.version },
    );
  }
  const stored = await readStoredManifest(dir);
  const archiveSha256 = await hashByteSource(inputRange(pkg, layout.archive.offset, layout.archive.size), signal);
  compareToManifest(m, { format: meta.archive.format, archiveSha256, archiveSize: layout.archive.size, files: stored.files, strip: '' });
  // The same archive with other vendored files is other content; the given copy's vendored bytes must verify too.
  if (JSON.stringify(m.vendor ?? null) !== JSON.stringify(stored.vendor ?? null)) {
    throw new StoreError(
      'AIRLOCK_VERSION_CONFLICT',
      `version ${m.version} is already in the store with different vendored files; choose another version label`,
      { subject: m.version },
    );
  }
  await verifyVendorMembers(pkg, layout);
}
