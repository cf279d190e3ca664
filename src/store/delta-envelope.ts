import type { KeyObject } from 'node:crypto';
import { SignatureError, UsageError } from '../errors.js';
import { checkSignature, signaturesOf } from '../package/index.js';
import type { DeltaLayout } from '../delta/index.js';
import { loadPolicy, policySigners, type LoadedPolicy } from './policy.js';
import type { ImportOptions } from './add-version.js';
import { storeKind } from './location.js';
import { loadTrustedKeys } from './trust.js';

/**
 * Who signed a delta's own manifest, and under which rule: the store's trust policy when it has
 * one (a live key of it), else the flat rule (--trust keys and trusted-keys/). Checked before any
 * of the delta is applied, by import and by verify --store.
 */
export async function checkDeltaEnvelope(
  store: string,
  layout: DeltaLayout,
  o: Pick<ImportOptions, 'trust' | 'allowUnsigned'>,
): Promise<{ signed: boolean; signer: string | null; rule: 'policy' | 'flat'; policySerial: number | null }> {
  const policy = (await storeKind(store)) === 'dir' ? await loadPolicy(store) : null;
  const trust = policy ? [] : [...o.trust, ...(await loadTrustedKeys(store))];
  const signer = checkEnvelope(store, layout, policy, trust, o);
  return { signed: signer !== null, signer, rule: policy ? 'policy' : 'flat', policySerial: policy?.policy.serial ?? null };
}

/** The delta's own manifest: signed by a trusted key (flat rule), or by at least one live key of the store's policy. Returns the signer's fingerprint. */
function checkEnvelope(
  store: string,
  layout: DeltaLayout,
  policy: LoadedPolicy | null,
  trust: KeyObject[],
  o: Pick<ImportOptions, 'trust' | 'allowUnsigned'>,
): string | null {
  if (!policy) return checkSignature(layout, { trust, allowUnsigned: o.allowUnsigned }).signer;
  if (o.trust.length)
    throw new UsageError(
      `store ${store} has a trust policy (serial ${policy.policy.serial}); --trust does not apply there: add keys with airlock trust rotate`,
      { subject: '--trust' },
    );
  const by = policySigners(policy, layout.manifestBytes, signaturesOf(layout), new Date());
  if (by.length === 0) {
    throw new SignatureError(
      'AIRLOCK_UNTRUSTED_SIGNATURE',
      `the delta manifest (airlock.json) of ${layout.manifest.domain} ${layout.manifest.version} is not signed by a live key of the store's trust policy ${policy.policy.serial}: unsigned, signed by another key, or edited after it was signed (sign it with airlock sign DELTA --key K)`,
      { subject: 'airlock.json.sig' },
    );
  }
  return by[0]!.fingerprint;
}
