import { UnsafeArchiveError } from '../errors.js';
import { ARCHIVE_CODES, resolveLimits, type ArchiveLimits } from '../archive/index.js';
import type { Manifest } from './manifest.js';

/**
 * What the manifest declares, held to the same limits the archive scan enforces (the
 * archive safety rules: file count, expanded size). A manifest beyond them describes an archive that
 * verification would refuse anyway, so it is refused first (exit 4, naming airlock.json): before
 * a byte is scanned, and before import asks the disk for the space it claims (2^52-byte files
 * used to come back as "not enough space: 17 PB"). Pure.
 */
export function checkManifestLimits(manifest: Pick<Manifest, 'files'>, limits?: Partial<ArchiveLimits>): void {
  const { maxFiles, maxExpandedBytes } = resolveLimits(limits);
  const subject = 'airlock.json';
  const files = manifest.files;
  if (files.length > maxFiles) {
    throw new UnsafeArchiveError(ARCHIVE_CODES.TOO_MANY_FILES, `${subject} lists ${files.length} files, more than the limit of ${maxFiles} (maxFiles)`, {
      subject,
      limit: maxFiles,
      declared: files.length,
    });
  }
  let total = 0;
  for (const f of files) {
    total += f.size; // each size ≤ 2^53-1 by the schema; the sum is exact until it passes the limit
    if (total > maxExpandedBytes) {
      throw new UnsafeArchiveError(
        ARCHIVE_CODES.TOO_LARGE,
        `${subject} declares more than ${maxExpandedBytes} bytes of files (limit maxExpandedBytes), passing it at ${JSON.stringify(f.path)}`,
        { subject, limit: maxExpandedBytes, path: f.path },
      );
    }
  }
}
