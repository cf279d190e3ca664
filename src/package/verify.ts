import type { KeyObject } from 'node:crypto';
import { DigestMismatchError } from '../errors.js';
import { scanArchive } from '../archive/index.js';
import type { ArchiveLimits } from '../archive/types.js';
import type { Manifest } from './manifest.js';
import { inputRange, readPackage, verifyVendorMembers, type PackageInput, type PackageLayout } from './reader.js';
import { checkSignature } from './signature.js';
import { compareToManifest } from './compare.js';
import { checkManifestLimits } from './limits.js';

export { checkSignature } from './signature.js';
export { compareToManifest } from './compare.js';

export interface VerifyOptions {
  trust: KeyObject[];
  allowUnsigned?: boolean;
  limits?: Partial<ArchiveLimits>;
  /**
   * Replaces the flat signature rule (the trust policy: `verify --store` asks the store's trust policy,
   * exactly as import would). Called before any archive byte is parsed.
   */
  decide?: (layout: PackageLayout) => Promise<{ signed: boolean; signer: string | null; signers: string[] }>;
}
export interface VerifyReport {
  manifest: Manifest;
  signed: boolean;
  /** Fingerprint of the trusted key that verified the signature. */
  signer: string | null;
  /** Fingerprints of every trusted key that signed (each once). */
  signers: string[];
  files: number;
  bytes: number;
}

/**
 * Everything `airlock verify` promises, extracting nothing: package structure, signature (before
 * any archive byte is parsed, so an untrusted package never reaches the decompressors), the
 * manifest's declared count and sizes against the archive limits, then one
 * streaming pass over the archive member in place — archive sha256, every safety rule, every
 * file's sha256 — compared with the manifest.
 */
export async function verifyPackage(path: PackageInput, o: VerifyOptions): Promise<VerifyReport> {
  const layout = await readPackage(path);
  const sig = o.decide ? await o.decide(layout) : checkSignature(layout, o);
  const { manifest, archive } = layout;
  checkManifestLimits(manifest, o.limits);
  if (archive.size !== manifest.archive.size) {
    throw new DigestMismatchError('AIRLOCK_ARCHIVE_SIZE', `${archive.name} is ${archive.size} bytes but the manifest says ${manifest.archive.size}`, {
      subject: archive.name,
    });
  }
  const scan = await scanArchive(inputRange(path, archive.offset, archive.size), { limits: o.limits });
  compareToManifest(manifest, scan);
  await verifyVendorMembers(path, layout);
  return { manifest, ...sig, files: scan.files.length, bytes: scan.files.reduce((n, f) => n + f.size, 0) };
}
