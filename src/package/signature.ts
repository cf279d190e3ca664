import { verify, type KeyObject } from 'node:crypto';
import { SignatureError } from '../errors.js';
import { fingerprint } from './keys.js';
import type { PackageLayout } from './reader.js';

export interface TrustOptions {
  trust: KeyObject[];
  allowUnsigned?: boolean;
}

type Signed = Pick<PackageLayout, 'manifestBytes' | 'signature'> & { signatures?: Buffer[] };

/** Every signature of a layout (a delta's layout still carries only `signature`). */
export function signaturesOf(layout: Signed): Buffer[] {
  return layout.signatures ?? (layout.signature ? [layout.signature] : []);
}

/**
 * The distinct keys of `keys` that made at least one of the package's signatures, by fingerprint
 * (sorted, each once: two copies of one key's signature count once), and how many signatures no
 * key of `keys` made. Pure. Each signature is a raw Ed25519 signature (RFC 8032, pure Ed25519)
 * over the exact manifest bytes, which is what `openssl pkeyutl -verify -rawin` checks.
 */
export function signersOf(layout: Signed, keys: readonly KeyObject[]): { signers: string[]; unknown: number } {
  const signers = new Set<string>();
  let unknown = 0;
  // A key that has signed is not tried again (it counts once): 32 distinct signers cost 528 checks, not 1,024.
  const open = keys.filter((k) => k.asymmetricKeyType === 'ed25519');
  const seen = new Set<string>();
  for (const sig of signaturesOf(layout)) {
    const hex = sig.toString('hex');
    if (seen.has(hex)) continue; // the same signature twice: the same signer, already counted (or not)
    seen.add(hex);
    const i = open.findIndex((k) => verify(null, layout.manifestBytes, k, sig));
    if (i >= 0) signers.add(fingerprint(open.splice(i, 1)[0]!));
    else unknown++;
  }
  return { signers: [...signers].sort(), unknown };
}

/**
 * The flat trust rule (--trust keys and STORE/trusted-keys/, no policy): any one trusted key.
 *
 * Fail closed: an unsigned package passes only with allowUnsigned. A package none of whose
 * signatures a trusted key verifies is refused even with allowUnsigned: we cannot tell a
 * stranger's key from a forged or tampered signature, and an attacker who can rewrite the manifest
 * can also re-sign it with a key of their own. Further signatures by keys this side does
 * not know are ignored once a trusted one verifies (a package may be co-signed for other stores).
 */
export function checkSignature(layout: Signed, o: TrustOptions): { signed: boolean; signer: string | null; signers: string[] } {
  const all = signaturesOf(layout);
  if (all.length === 0) {
    if (o.allowUnsigned) return { signed: false, signer: null, signers: [] };
    throw new SignatureError('AIRLOCK_UNSIGNED', 'package is not signed (no airlock.json.sig); pass --allow-unsigned to accept it anyway', {
      subject: 'airlock.json.sig',
    });
  }
  const { signers } = signersOf(layout, o.trust);
  if (signers.length > 0) return { signed: true, signer: signers[0]!, signers };
  if (o.trust.length === 0) {
    throw new SignatureError('AIRLOCK_UNTRUSTED_SIGNATURE', "package is signed but no key is trusted; pass --trust PUBFILE with the signer's public key", {
      subject: 'airlock.json.sig',
    });
  }
  const what = all.length === 1 ? 'airlock.json.sig does' : `none of the ${all.length} signatures does`;
  throw new SignatureError(
    'AIRLOCK_UNTRUSTED_SIGNATURE',
    `${what} not verify with any trusted key (${o.trust.map((k) => fingerprint(k)).join(', ')}): signed by an untrusted key, or the manifest was altered`,
    { subject: 'airlock.json.sig', trusted: o.trust.map((k) => fingerprint(k)) },
  );
}
