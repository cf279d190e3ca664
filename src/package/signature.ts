import { verify, type KeyObject } from 'node:crypto';
import { SignatureError } from '../errors.js';
import { fingerprint } from './keys.js';
import type { PackageLayout } from './reader.js';

export interface TrustOptions {
  trust: KeyObject[];
  allowUnsigned?: boolean;
}

/**
 * Check airlock.json.sig: a raw Ed25519 signature (RFC 8032, pure Ed25519, no prehash) over the
 * exact manifest bytes, which is what `openssl pkeyutl -verify -rawin` checks.
 *
 * Policy (fail closed): an unsigned package passes only with allowUnsigned. A signature that no
 * trusted key verifies is refused even with allowUnsigned: we cannot tell a stranger's key from a
 * forged or tampered signature, and an attacker who can rewrite the manifest can also re-sign it
 * with a key of their own (issue 2: "a signature by a key that is neither given ... is refused").
 */
export function checkSignature(layout: Pick<PackageLayout, 'manifestBytes' | 'signature'>, o: TrustOptions): { signed: boolean; signer: string | null } {
  if (!layout.signature) {
    if (o.allowUnsigned) return { signed: false, signer: null };
    throw new SignatureError('AIRLOCK_UNSIGNED', 'package is not signed (no airlock.json.sig); pass --allow-unsigned to accept it anyway', { subject: 'airlock.json.sig' });
  }
  for (const key of o.trust) {
    if (key.asymmetricKeyType !== 'ed25519') continue;
    if (verify(null, layout.manifestBytes, key, layout.signature)) return { signed: true, signer: fingerprint(key) };
  }
  if (o.trust.length === 0) {
    throw new SignatureError('AIRLOCK_UNTRUSTED_SIGNATURE', 'package is signed but no key is trusted; pass --trust PUBFILE with the signer\'s public key', { subject: 'airlock.json.sig' });
  }
  throw new SignatureError('AIRLOCK_UNTRUSTED_SIGNATURE', `airlock.json.sig does not verify with any trusted key (${o.trust.map((k) => fingerprint(k)).join(', ')}): signed by an untrusted key, or the manifest was altered`, { subject: 'airlock.json.sig', trusted: o.trust.map((k) => fingerprint(k)) });
}
