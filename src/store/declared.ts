import { DigestMismatchError, MalformedError } from '../errors.js';
import { ARCHIVE_CODES, type ArchiveLimits } from '../archive/index.js';
import { checkManifestLimits, type PackageLayout } from '../package/index.js';

/**
 * What the signed manifest declares, checked before import writes a byte (the store is not even
 * created yet): everything here would make verification fail later, after the whole site had been
 * written and fsynced (200,001 declared files took 117 s to be refused). Pure.
 */
export function checkDeclared(layout: PackageLayout, limits?: Partial<ArchiveLimits>): void {
  const { manifest, archive } = layout;
  checkManifestLimits(manifest, limits);
  if (archive.size !== manifest.archive.size) {
    throw new DigestMismatchError('AIRLOCK_ARCHIVE_SIZE', `${archive.name} is ${archive.size} bytes but the manifest says ${manifest.archive.size}`, {
      subject: archive.name,
      expected: manifest.archive.size,
      actual: archive.size,
    });
  }
  if (!manifest.files.some((f) => f.path === 'index.html')) {
    throw new MalformedError(ARCHIVE_CODES.NO_INDEX, 'airlock.json lists no index.html at the root of the site: it cannot be served', {
      subject: 'index.html',
    });
  }
}
