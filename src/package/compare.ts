import { DigestMismatchError, MalformedError, type ErrorCode } from '../errors.js';
import type { ScanResult } from '../archive/types.js';
import type { Manifest } from './manifest.js';

const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Compare what the archive really holds (one scan) with what the manifest promises, and throw a
 * DigestMismatchError naming the first failure: the archive itself first (format, size, sha256),
 * then each path in byte order (missing, extra, size, sha256). Pure.
 */
export function compareToManifest(manifest: Manifest, scan: ScanResult): void {
  const a = manifest.archive;
  const fail = (code: ErrorCode, msg: string, subject: string, extra: Record<string, unknown> = {}) => {
    throw new DigestMismatchError(code, msg, { subject, ...extra });
  };
  if (scan.format !== a.format) fail('AIRLOCK_ARCHIVE_FORMAT', `${a.name} is a ${scan.format} archive but the manifest says ${a.format}`, a.name);
  if (scan.archiveSize !== a.size)
    fail('AIRLOCK_ARCHIVE_SIZE', `${a.name} is ${scan.archiveSize} bytes but the manifest says ${a.size}`, a.name, {
      expected: a.size,
      actual: scan.archiveSize,
    });
  if (scan.archiveSha256 !== a.sha256)
    fail('AIRLOCK_ARCHIVE_DIGEST', `${a.name} has sha256 ${scan.archiveSha256} but the manifest says ${a.sha256}`, a.name, {
      expected: a.sha256,
      actual: scan.archiveSha256,
    });

  const promised = new Map<string, Manifest['files'][number]>();
  for (const f of manifest.files) {
    if (promised.has(f.path)) throw new MalformedError('AIRLOCK_BAD_MANIFEST', `airlock.json lists ${f.path} twice`, { subject: f.path });
    promised.set(f.path, f);
  }
  const actual = new Map(scan.files.map((f) => [f.path, f]));
  const paths = [...new Set([...promised.keys(), ...actual.keys()])].sort(byteOrder);
  for (const path of paths) {
    const want = promised.get(path);
    const got = actual.get(path);
    if (!got) fail('AIRLOCK_MISSING_FILE', `${path} is listed in the manifest but missing from ${a.name}`, path);
    else if (!want) fail('AIRLOCK_EXTRA_FILE', `${path} is in ${a.name} but not listed in the manifest`, path);
    else if (got.size !== want.size)
      fail('AIRLOCK_SIZE_MISMATCH', `${path} is ${got.size} bytes but the manifest says ${want.size}`, path, { expected: want.size, actual: got.size });
    else if (got.sha256 !== want.sha256)
      fail('AIRLOCK_DIGEST_MISMATCH', `${path} has sha256 ${got.sha256} but the manifest says ${want.sha256}`, path, {
        expected: want.sha256,
        actual: got.sha256,
      });
  }
}
