import { DigestMismatchError, type ErrorCode } from '../errors.js';
import type { EntryWatch } from '../archive/index.js';
import type { Manifest } from '../package/index.js';

type Promised = Manifest['files'][number];

/**
 * Hold each archive entry against the signed manifest as it is extracted, so that an entry the
 * manifest does not list (or lists with another size or digest) is refused at once, before a
 * byte of it is written, instead of after the last file (compareToManifest still runs at the
 * end for what only the end can tell: missing files, the archive digest).
 *
 * Manifest paths are after stripping the wrapping folder, which is only known once every entry
 * is read: each entry is checked against both readings the manifest allows (no wrapping folder,
 * or the first entry's first folder), and a reading is dropped as soon as an entry contradicts it.
 */
export function manifestWatch(manifest: Pick<Manifest, 'files' | 'archive'>): EntryWatch {
  const promised = new Map(manifest.files.map((f) => [f.path, f]));
  const name = manifest.archive.name;
  let readings: string[] | undefined;
  const lookup = (prefix: string, path: string): Promised | undefined => (path.startsWith(prefix) ? promised.get(path.slice(prefix.length)) : undefined);
  const fail = (code: ErrorCode, message: string, subject: string, extra: Record<string, unknown> = {}) => {
    throw new DigestMismatchError(code, message, { subject, ...extra });
  };
  return {
    entry(path, size) {
      const slash = path.indexOf('/');
      readings ??= slash > 0 ? ['', path.slice(0, slash + 1)] : [''];
      const listed = readings.filter((p) => lookup(p, path));
      const fit = listed.filter((p) => lookup(p, path)!.size === size);
      if (fit.length === 0) {
        const want = listed.length ? lookup(listed[0]!, path) : undefined;
        if (want)
          fail('AIRLOCK_SIZE_MISMATCH', `${want.path} is ${size} bytes in ${name} but the manifest says ${want.size}`, want.path, {
            expected: want.size,
            actual: size,
          });
        fail('AIRLOCK_EXTRA_FILE', `${path} is in ${name} but not listed in the manifest`, path);
      }
      readings = fit;
    },
    done(path, _size, sha256) {
      const fit = readings!.filter((p) => lookup(p, path)?.sha256 === sha256);
      if (fit.length === 0) {
        const want = lookup(readings![0]!, path)!;
        fail('AIRLOCK_DIGEST_MISMATCH', `${want.path} has sha256 ${sha256} but the manifest says ${want.sha256}`, want.path, {
          expected: want.sha256,
          actual: sha256,
        });
      }
      readings = fit;
    },
  };
}
