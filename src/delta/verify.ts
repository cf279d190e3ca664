import { DigestMismatchError } from '../errors.js';
import { hashByteSource } from '../archive/index.js';
import { inputRange, type PackageInput } from '../package/reader.js';
import { checkSignature, type TrustOptions } from '../package/signature.js';
import { readDelta, type DeltaLayout } from './reader.js';
import type { DeltaManifest } from './format.js';

export interface DeltaVerifyReport {
  manifest: DeltaManifest;
  signed: boolean;
  signer: string | null;
  /** The target manifest's signatures travel too; they are checked at import, once it is rebuilt from the base. */
  targetSigned: boolean;
  targetSignatures: number;
}

/**
 * What `airlock verify` can check of a delta without its base: structure and the delta's own
 * rules (readDelta), the delta manifest's signature, and the payload's sha256. The rebuilt target
 * — every file, the canonical archive, the target signature — is checked at import, where the
 * base is (src/store/delta-import.ts).
 */
export async function verifyDelta(
  input: PackageInput,
  o: TrustOptions & {
    /** Decides on the delta manifest's signature instead of `trust` (verify --store: the store's rule). */
    decide?: (layout: DeltaLayout) => Promise<{ signed: boolean; signer: string | null }>;
  },
): Promise<DeltaVerifyReport> {
  const layout = await readDelta(input);
  const sig = o.decide ? await o.decide(layout) : checkSignature(layout, o);
  const { payload } = layout;
  const digest = await hashByteSource(inputRange(input, payload.offset, payload.size));
  if (digest !== layout.manifest.payload.sha256) {
    throw new DigestMismatchError('AIRLOCK_DIGEST_MISMATCH', `payload.gz has sha256 ${digest} but the delta manifest says ${layout.manifest.payload.sha256}`, {
      subject: payload.name,
    });
  }
  return { manifest: layout.manifest, ...sig, targetSigned: layout.target.signature !== null, targetSignatures: layout.target.signatures.length };
}
