import { readFile } from 'node:fs/promises';
import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { MalformedError, SignatureError, UsageError, VerificationError } from '../errors.js';
import { checkSignature, signaturesOf, type Manifest, type PackageLayout } from '../package/index.js';
import { atomicWriteFile } from '../util/fsx.js';
import { liveKeys, loadPolicy, policySigners, thresholdFor, trustPaths, type LoadedPolicy } from './policy.js';
import { loadTrustedKeys } from './trust.js';

/**
 * What a store decides about a package before a byte of it is extracted (issue 14), shared by
 * `import` and `verify --store` so both answer alike: who signed it, whether that meets the
 * store's rule, and (with a trust policy) whether it is fresh. Reads the store; writes nothing.
 */
export interface Admission {
  rule: 'policy' | 'flat';
  /** Fingerprints of the keys that count, each once. */
  signers: string[];
  /** Their names in the policy (policy rule only). */
  signerNames: string[];
  /** Distinct signers the rule needs (null: unsigned accepted with --allow-unsigned under the flat rule). */
  need: number | null;
  /** Freshness rules broken but overridden by --allow-downgrade (recorded in the audit log). */
  overridden: string[];
  policySerial: number | null;
}
export interface AdmitOptions { trust: KeyObject[]; allowUnsigned?: boolean; allowDowngrade?: boolean; now?: Date }

export async function admitPackage(store: string, layout: Pick<PackageLayout, 'manifest' | 'manifestBytes' | 'signature' | 'signatures'>, o: AdmitOptions): Promise<Admission> {
  const policy = await loadPolicy(store);
  const now = o.now ?? new Date();
  if (!policy) {
    const trust = [...o.trust, ...(await loadTrustedKeys(store))];
    const sig = checkSignature(layout, { trust, allowUnsigned: o.allowUnsigned });
    return { rule: 'flat', signers: sig.signers, signerNames: [], need: sig.signed ? 1 : null, overridden: [], policySerial: null };
  }
  if (o.trust.length) throw new UsageError(`store ${store} has a trust policy (serial ${policy.policy.serial}); --trust does not apply there: add keys with airlock trust rotate`, { subject: '--trust' });
  const domain = layout.manifest.domain;
  const need = thresholdFor(policy.policy, domain);
  const by = policySigners(policy, layout.manifestBytes, signaturesOf(layout), now);
  if (by.length < need) {
    const all = signaturesOf(layout).length;
    const live = new Set(liveKeys(policy, now).map((k) => k.name));
    const expired = policy.keys.filter((k) => !live.has(k.name) && signaturesOf(layout).some((s) => policySigners({ keys: [{ ...k, expiresAt: null }] }, layout.manifestBytes, [s], now).length)).map((k) => k.name);
    throw new SignatureError('AIRLOCK_THRESHOLD',
      `package ${domain} ${layout.manifest.version} is signed by ${by.length} distinct key(s) of the store's trust policy (${by.map((k) => k.name).join(', ') || 'none'}); ${domain} needs ${need}` +
      `${expired.length ? `; signatures by expired keys do not count (${expired.join(', ')})` : ''} (${all} signature member(s); keys not in policy ${policy.policy.serial} count for nothing)`,
      { subject: 'airlock.json.sig', signers: by.map((k) => k.fingerprint), need, expired });
  }
  const overridden = await checkFreshness(store, layout.manifest, policy, now, Boolean(o.allowDowngrade));
  return { rule: 'policy', signers: by.map((k) => k.fingerprint).sort(), signerNames: by.map((k) => k.name), need, overridden, policySerial: policy.policy.serial };
}

const SeenSchema = z.object({
  format: z.literal('airlock-seen/1'),
  domains: z.record(z.string(), z.object({ sequence: z.number().int().nonnegative(), version: z.string(), at: z.string() }).strict()),
}).strict();
type Seen = z.infer<typeof SeenSchema>;

/** STORE/trust/seen.json: the highest sequence ever imported per domain (survives prune). */
export async function readSeen(store: string): Promise<Seen> {
  const path = trustPaths(store).seen;
  const raw = await readFile(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (raw === null) return { format: 'airlock-seen/1', domains: {} };
  let parsed: unknown = null;
  try {
    parsed = raw.length <= 4 * 1024 * 1024 ? JSON.parse(raw.toString('utf8')) : null;
  } catch { /* reported below */ }
  const r = SeenSchema.safeParse(parsed);
  if (!r.success) throw new MalformedError('AIRLOCK_BAD_SEEN', `${path} is damaged; imports are refused until it is restored (it guards against downgrades)`, { subject: path });
  return r.data;
}

/** Raise the domain's highest sequence (caller holds the lock). */
export async function recordSeen(store: string, m: Pick<Manifest, 'domain' | 'version' | 'sequence'>): Promise<void> {
  if (m.sequence === undefined) return;
  const seen = await readSeen(store);
  const cur = seen.domains[m.domain];
  if (cur && cur.sequence >= m.sequence) return;
  seen.domains[m.domain] = { sequence: m.sequence, version: m.version, at: new Date().toISOString() };
  await atomicWriteFile(trustPaths(store).seen, JSON.stringify(seen, null, 2) + '\n');
}

/**
 * No downgrade, no replay, no freeze, no wrong store (TUF's rollback, freeze and mix-up attacks,
 * offline). A package without `sequence` is accepted only while the store has seen no sequenced
 * package of that domain (older airlock versions wrote none). Returns the rules overridden.
 */
export async function checkFreshness(store: string, m: Manifest, policy: LoadedPolicy, now: Date, allowDowngrade: boolean): Promise<string[]> {
  const broken: { code: string; why: string }[] = [];
  if (m.expiresAt !== undefined && Date.parse(m.expiresAt) <= now.getTime()) broken.push({ code: 'AIRLOCK_EXPIRED', why: `it expired at ${m.expiresAt}` });
  const identity = policy.policy.identity;
  if (m.audience !== undefined && identity !== null && m.audience !== identity) broken.push({ code: 'AIRLOCK_AUDIENCE', why: `it is addressed to store ${JSON.stringify(m.audience)}, and this store is ${JSON.stringify(identity)}` });
  const seen = (await readSeen(store)).domains[m.domain];
  if (seen && m.sequence === undefined) broken.push({ code: 'AIRLOCK_NO_SEQUENCE', why: `it has no sequence, and this store has imported ${m.domain} with sequence ${seen.sequence} (${seen.version})` });
  if (seen && m.sequence !== undefined && m.sequence < seen.sequence) broken.push({ code: 'AIRLOCK_DOWNGRADE', why: `its sequence ${m.sequence} is below ${seen.sequence}, the highest this store has imported for ${m.domain} (${seen.version})` });
  if (broken.length === 0) return [];
  if (allowDowngrade) return broken.map((b) => b.code);
  const first = broken[0]!;
  throw new VerificationError(first.code, `package ${m.domain} ${m.version} refused: ${broken.map((b) => b.why).join('; ')} (pass --allow-downgrade to import it anyway; that is recorded in the audit log)`,
    { subject: 'airlock.json', rules: broken.map((b) => b.code) });
}
