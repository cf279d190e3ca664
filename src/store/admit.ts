import { mkdir } from 'node:fs/promises';
import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { MalformedError, SignatureError, UsageError, VerificationError, type ErrorCode } from '../errors.js';
import { checkSignature, signaturesOf, type Manifest, type PackageLayout } from '../package/index.js';
import { atomicWriteFile, fsyncDir, readRegularFileIfExists } from '../util/fsx.js';
import { parseJsonText } from '../util/json-text.js';
import { liveKeys, loadPolicy, policySigners, thresholdFor, trustPaths } from './policy.js';
import { loadTrustedKeys } from './trust.js';
import { auditHistory } from './audit/chain.js';
import type { AuditHistory } from './audit/learn.js';
import { existingMeta } from './existing.js';
import { readStoredManifestRaw } from './meta.js';
import { checkVersionsFolder } from './holdings.js';
import { isLabel, versionDir } from './paths.js';
import { VERSION_LABEL } from '../package/label.js';

/**
 * What a store decides about a package before a byte of it is extracted, shared by
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
/** --allow-downgrade: every freshness rule (true), or only the rules named (a fleet follower: AIRLOCK_DOWNGRADE). */
export type AllowDowngrade = boolean | readonly string[];
export interface AdmitOptions {
  trust: KeyObject[];
  allowUnsigned?: boolean;
  allowDowngrade?: AllowDowngrade;
  now?: Date;
}

export async function admitPackage(
  store: string,
  layout: Pick<PackageLayout, 'manifest' | 'manifestBytes' | 'signature' | 'signatures'>,
  o: AdmitOptions,
): Promise<Admission> {
  await checkVersionsFolder(store); // a damaged store is refused (exit 2) before any of its files is read
  const policy = await loadPolicy(store);
  const now = o.now ?? new Date();
  if (!policy) {
    const trust = [...o.trust, ...(await loadTrustedKeys(store))];
    const sig = checkSignature(layout, { trust, allowUnsigned: o.allowUnsigned });
    // Freshness holds for every store; a store without a policy has no identity, so a package
    // addressed to a store is refused here (AIRLOCK_AUDIENCE) like anywhere it was not sent.
    const overridden = await checkFreshness(store, layout.manifest, null, now, o.allowDowngrade ?? false, layout.manifestBytes);
    return { rule: 'flat', signers: sig.signers, signerNames: [], need: sig.signed ? 1 : null, overridden, policySerial: null };
  }
  if (o.trust.length)
    throw new UsageError(
      `store ${store} has a trust policy (serial ${policy.policy.serial}); --trust does not apply there: add keys with airlock trust rotate`,
      { subject: '--trust' },
    );
  const domain = layout.manifest.domain;
  const need = thresholdFor(policy.policy, domain);
  const by = policySigners(policy, layout.manifestBytes, signaturesOf(layout), now);
  if (by.length < need) {
    const all = signaturesOf(layout).length;
    const live = new Set(liveKeys(policy, now).map((k) => k.name));
    const expired = policy.keys
      .filter(
        (k) =>
          !live.has(k.name) && signaturesOf(layout).some((s) => policySigners({ keys: [{ ...k, expiresAt: null }] }, layout.manifestBytes, [s], now).length),
      )
      .map((k) => k.name);
    // Members no key of the policy made, expired or not: named only when there are some.
    const anyAge = { keys: policy.keys.map((k) => ({ ...k, expiresAt: null })) };
    const outside = signaturesOf(layout).filter((s) => policySigners(anyAge, layout.manifestBytes, [s], now).length === 0).length;
    throw new SignatureError(
      'AIRLOCK_THRESHOLD',
      `package ${domain} ${layout.manifest.version} is signed by ${by.length} distinct key(s) of the store's trust policy (${by.map((k) => k.name).join(', ') || 'none'}); ${domain} needs ${need}` +
        (expired.length ? `; signatures by expired keys do not count (${expired.join(', ')})` : '') +
        (outside ? `; ${outside} of its ${all} signature member(s) are by keys not in policy ${policy.policy.serial} and count for nothing` : ''),
      { subject: 'airlock.json.sig', signers: by.map((k) => k.fingerprint), need, expired },
    );
  }
  const overridden = await checkFreshness(store, layout.manifest, policy.policy.identity, now, o.allowDowngrade ?? false, layout.manifestBytes);
  return {
    rule: 'policy',
    signers: by.map((k) => k.fingerprint).sort(),
    signerNames: by.map((k) => k.name),
    need,
    overridden,
    policySerial: policy.policy.serial,
  };
}

/** Every refusal of a damaged seen.json names the way out. */
const SEEN_WAY_OUT =
  "imports are refused until it is restored (it guards against downgrades): from a backup, or remove it and import each domain's newest package (or a newer one) again, which writes its order back (the audit log allows no older one)";

const SeenSchema = z
  .object({
    format: z.literal('airlock-seen/1'),
    // version: a label, as airlock writes it (it is quoted in refusals); at: an ISO time.
    domains: z.record(
      z.string(),
      z.object({ sequence: z.number().int().nonnegative(), version: z.string().regex(VERSION_LABEL), at: z.string().max(64) }).strict(),
    ),
  })
  .strict();
type Seen = z.infer<typeof SeenSchema>;

/** STORE/trust/seen.json: the highest order (packageOrder) ever imported per domain, every store (survives prune). */
export async function readSeen(store: string): Promise<Seen> {
  const path = trustPaths(store).seen;
  const damaged = (why: string) => new MalformedError('AIRLOCK_BAD_SEEN', `${path} ${why}; ${SEEN_WAY_OUT}`, { subject: path });
  const raw = await readRegularFileIfExists(path, { maxBytes: 4 * 1024 * 1024, refuse: damaged });
  if (raw === null) return { format: 'airlock-seen/1', domains: {} };
  const parsed = parseJsonText(raw, damaged, 'a seen record');
  const r = SeenSchema.safeParse(parsed);
  if (!r.success) throw new MalformedError('AIRLOCK_BAD_SEEN', `${path} is damaged; ${SEEN_WAY_OUT}`, { subject: path });
  return r.data;
}

/**
 * Where a package stands in its domain's order: its `sequence`, or, for a package written before
 * sequences existed, its `createdAt` in milliseconds. Both are signed manifest fields and on one
 * scale (`fetch` and `pack` write the creation time in ms as the sequence), so old and new
 * packages of a domain are ordered together. null: a createdAt that does not parse (the schema
 * prevents it; then no order is claimed and the package is refused once the domain has one).
 */
export function packageOrder(m: Pick<Manifest, 'sequence' | 'createdAt'>): number | null {
  if (m.sequence !== undefined) return m.sequence;
  const t = Date.parse(m.createdAt);
  return Number.isFinite(t) && t >= 0 ? t : null;
}

/** Raise the domain's highest order seen (caller holds the lock). Creates STORE/trust/ if needed. */
export async function recordSeen(store: string, m: Pick<Manifest, 'domain' | 'version' | 'sequence' | 'createdAt'>): Promise<void> {
  const order = packageOrder(m);
  if (order === null) return;
  const seen = await readSeen(store);
  const cur = seen.domains[m.domain];
  if (cur && cur.sequence >= order) return;
  // Never an order below the newest import the log records, whether the domain has none (a
  // seen.json lost, or a crash before it) or a lower one (an older seen.json put back): a waived
  // downgrade, or an older version again, leaves it as it is.
  const logged = (await auditHistory(store)).importedSequence.get(m.domain);
  if (logged !== undefined && order < logged) return;
  seen.domains[m.domain] = { sequence: order, version: m.version, at: new Date().toISOString() };
  const t = trustPaths(store);
  const made = await mkdir(t.dir).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') return false;
      throw err;
    },
  );
  if (made) await fsyncDir(store);
  await atomicWriteFile(t.seen, JSON.stringify(seen, null, 2) + '\n');
}

/** Is this exact manifest already in the store as a complete version? */
async function alreadyStored(store: string, m: Pick<Manifest, 'version'>, manifestBytes: Buffer): Promise<boolean> {
  if (!isLabel(m.version)) return false;
  const dir = versionDir(store, m.version);
  // Bounded, regular files only, opened non-blocking: a FIFO or a device there is refused (exit 2,
  // AIRLOCK_BAD_VERSION naming it), never waited on; no version there (ENOENT, ENOTDIR) is "not stored".
  const stored = await readStoredManifestRaw(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    throw err;
  });
  if (!stored || !stored.equals(manifestBytes)) return false;
  return (await existingMeta(dir).catch(() => null)) !== null;
}

/**
 * No downgrade, no replay, no freeze, no wrong store (TUF's rollback, freeze and mix-up attacks,
 * offline), for every store: with or without a trust policy. A package without `sequence` (older
 * airlock) is ordered by its createdAt (packageOrder). `identity` is the policy's store identity
 * (null: none, without a policy or with a policy that names none); a package that names an
 * audience imports only into the store of that identity. Returns the rules overridden by --allow-downgrade.
 * A package whose exact manifest is already in the store as a complete version (`manifestBytes`)
 * brings nothing in: importing it again ("unchanged") is like activating it, the operator's
 * decision, and no freshness rule applies (a pruned version is not in the store: refused).
 * `history`: the audit log's, when the caller has just scanned it (else it is scanned here).
 */
export async function checkFreshness(
  store: string,
  m: Manifest,
  identity: string | null,
  now: Date,
  allowDowngrade: AllowDowngrade,
  manifestBytes?: Buffer,
  history?: AuditHistory,
): Promise<string[]> {
  // Read first: a damaged seen.json refuses every import, one already in the store too, and so
  // verify --store, which answers as import would.
  const seen = (await readSeen(store)).domains[m.domain];
  if (manifestBytes && (await alreadyStored(store, m, manifestBytes))) return [];
  const broken: { code: ErrorCode; why: string }[] = [];
  if (m.expiresAt !== undefined && Date.parse(m.expiresAt) <= now.getTime()) broken.push({ code: 'AIRLOCK_EXPIRED', why: `it expired at ${m.expiresAt}` });
  if (m.audience !== undefined && m.audience !== identity) {
    broken.push({
      code: 'AIRLOCK_AUDIENCE',
      why: `it is addressed to store ${JSON.stringify(m.audience)}, and this store ${identity === null ? 'has no identity (a trust policy names it: airlock trust init/rotate --identity)' : `is ${JSON.stringify(identity)}`}`,
    });
  }
  // A deleted or older seen record put back would quietly switch the downgrade check off: the
  // audit log remembers every domain this store imported and the highest sequence it recorded,
  // and seen.json must hold at least that (unless the order rule is waived).
  // Waived (--allow-downgrade), the rule is named among those overridden, so the audit line says so.
  const orderWaived = allowDowngrade === true || (Array.isArray(allowDowngrade) && allowDowngrade.includes('AIRLOCK_DOWNGRADE'));
  const waived: ErrorCode[] = [];
  const h = history ?? (await auditHistory(store));
  const path = trustPaths(store).seen;
  const logged = h.importedSequence.get(m.domain);
  const order = packageOrder(m);
  // A package at or above the log's newest is no downgrade whatever seen.json lost: it is
  // imported, and its order written back (the way out the refusals below name).
  const atLogged = logged !== undefined && order !== null && order >= logged;
  const lost = !seen && h.importedDomains.has(m.domain) && !atLogged;
  const lowered = seen !== undefined && logged !== undefined && seen.sequence < logged && !atLogged;
  const upTo = logged === undefined ? '' : ` (up to sequence ${logged})`;
  if ((lost || lowered) && orderWaived) waived.push('AIRLOCK_BAD_SEEN');
  else if (lost) {
    throw new MalformedError(
      'AIRLOCK_BAD_SEEN',
      `${path} has no order for ${m.domain}, yet the audit log records its import${upTo}; imports of ${m.domain}${logged === undefined ? '' : ` below ${logged}`} are refused until it is restored (it guards against downgrades): from a backup, or by importing the newest package of ${m.domain} (or a newer one) again; if that import was cut short by a crash, import that package again with --allow-downgrade`,
      { subject: path },
    );
  } else if (lowered) {
    throw new MalformedError(
      'AIRLOCK_BAD_SEEN',
      `${path} records sequence ${seen.sequence} for ${m.domain}, below ${logged}, the highest the audit log records as imported for it (an older seen record was put back, or that import was cut short by a crash); imports of ${m.domain} below ${logged} are refused until it is restored (it guards against downgrades): from a backup, or by importing the newest package of ${m.domain} (or a newer one) again; after a crash, import that package again with --allow-downgrade`,
      { subject: path, domain: m.domain, seen: seen.sequence, logged },
    );
  }
  const what =
    m.sequence !== undefined ? `its sequence ${m.sequence}` : `it has no sequence, and its createdAt ${m.createdAt} (${order ?? 'unreadable'} ms, its order)`;
  if (seen && (order === null || order < seen.sequence))
    broken.push({ code: 'AIRLOCK_DOWNGRADE', why: `${what} is below ${seen.sequence}, the highest this store has imported for ${m.domain} (${seen.version})` });
  if (broken.length === 0) return waived;
  const refused = allowDowngrade === true ? [] : allowDowngrade === false ? broken : broken.filter((b) => !allowDowngrade.includes(b.code));
  if (refused.length === 0) return [...waived, ...broken.map((b) => b.code)];
  const first = refused[0]!;
  throw new VerificationError(
    first.code,
    `package ${m.domain} ${m.version} refused: ${refused.map((b) => b.why).join('; ')} (pass --allow-downgrade to import it anyway; that is recorded in the audit log)`,
    { subject: 'airlock.json', rules: refused.map((b) => b.code) },
  );
}
