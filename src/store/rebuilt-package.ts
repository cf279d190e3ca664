import { join } from 'node:path';
import { DigestMismatchError, EXIT, StoreError } from '../errors.js';
import { MAX_SIGNATURES, SIGNATURE_BYTES, signatureMember } from '../package/index.js';
import { writeCanonicalPackage } from '../delta/index.js';
import { describeFsError, fileSha256, readRegularFileIfExists, writeDurably } from '../util/fsx.js';
import { readMeta, readStoredManifestBytes } from './meta.js';
import { versionDir, versionPaths } from './paths.js';

/**
 * The package file of a stored version, for those who hand packages on (the mirror).
 * A version imported whole keeps the package it came in (version.json names its sha256). One
 * imported from a delta keeps none (the import writes no second copy of the site): its
 * package — the target's full package, the same bytes `airlock delta` wrote beside the delta — is
 * a pure function of its files, its manifest and the signatures kept beside it, so it is built
 * here when first asked for, into the version folder as package.airlock (util/fsx writeDurably:
 * derived data, but a reader must never find half a package), checked on the way: every file
 * against the manifest and the tar against the manifest's archive digest. Later calls find it
 * there and hash it.
 */
export interface StoredPackage {
  path: string;
  sha256: string;
}

const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

export async function storedPackage(store: string, label: string, signal?: AbortSignal): Promise<StoredPackage> {
  const dir = versionDir(store, label);
  const p = versionPaths(dir);
  const meta = await readMeta(dir);
  if (meta.packageSha256 !== null) return { path: p.pkg, sha256: meta.packageSha256 };
  // Regular file only, opened non-blocking: a FIFO or a device there is refused in words, never waited on.
  const missing = describeFsError({ code: 'ENOENT' });
  const have = await fileSha256(p.pkg, (why) => (why === missing ? Object.assign(new Error(why), { code: 'ENOENT' }) : damagedFile(p.pkg, why))).catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    },
  );
  if (have !== null) return { path: p.pkg, sha256: have };
  const { bytes: manifestBytes, manifest } = await readStoredManifestBytes(dir);
  const signatures: Buffer[] = [];
  for (let n = 1; n <= MAX_SIGNATURES; n++) {
    const sig = await readSignature(join(dir, signatureMember(n)));
    if (sig === null) break;
    signatures.push(sig);
  }
  // Checked before it gets its name: every file against the manifest's size and sha256 as it is
  // read, and the tar against the manifest's archive digest.
  const built = await writeDurably(p.pkg, async (fh) => {
    const b = await writeCanonicalPackage(fh, { manifestBytes, signatures, createdAt: manifest.createdAt, siteDir: p.site, files: manifest.files, signal });
    if (b.archiveSha256 !== manifest.archive.sha256 || b.archiveSize !== manifest.archive.size) {
      throw new DigestMismatchError(
        'AIRLOCK_ARCHIVE_DIGEST',
        `the package of version ${label}, built from its files, has a bundle.tar with sha256 ${b.archiveSha256} (${b.archiveSize} bytes) but its manifest says ${manifest.archive.sha256} (${manifest.archive.size} bytes)`,
        { subject: label },
      );
    }
    return b;
  }).catch((err: NodeJS.ErrnoException) => {
    if (!NOT_WRITABLE.has(err.code ?? '')) throw err;
    throw new StoreError(
      'AIRLOCK_STORE_READONLY',
      `version ${label} was imported from a delta, and its package is built on first use into ${dir}, which cannot be written: ${describeFsError(err, 'write')}`,
      { subject: dir, errno: err.code },
    );
  });
  return { path: p.pkg, sha256: built.packageSha256 };
}

/** A kept signature: exactly an Ed25519 signature's 64 bytes (read no further), or null when there is none. */
const damagedFile = (path: string, why: string) =>
  new StoreError('AIRLOCK_BAD_VERSION', `${path} ${why}; the store file was damaged or edited by hand`, { subject: path }, EXIT.USAGE);

async function readSignature(path: string): Promise<Buffer | null> {
  const damaged = (why: string) => damagedFile(path, why);
  // Regular files only, opened non-blocking: a FIFO or a device there is refused, never waited on or read forever.
  const bytes = await readRegularFileIfExists(path, { maxBytes: SIGNATURE_BYTES, refuse: damaged });
  if (bytes === null) return null;
  if (bytes.length !== SIGNATURE_BYTES) throw damaged(`is not a ${SIGNATURE_BYTES}-byte signature`);
  return bytes;
}
