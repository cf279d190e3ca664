import { createHash, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { MalformedError, SignatureError, UsageError } from '../errors.js';
import { STORE_IDENTITY } from '../package/index.js';
import { DOMAIN } from '../package/label.js';
import { fingerprintDer, parsePublicKeyText } from '../package/keys.js';
import { jsonTooDeepAt } from '../util/json-depth.js';
import { parseJsonText } from '../util/json-text.js';
import { describeIssues } from '../upstream/describe.js';

/**
 * The store's trust policy: named Ed25519 keys (optionally expiring), how many distinct
 * keys must sign a package (a default and per-domain overrides), and the store's identity (a
 * package's `audience`). Stored as a signed envelope; every accepted policy is kept in the chain.
 */
export const POLICY_FORMAT = 'airlock-trust-policy/1';
export const SIGNED_POLICY_FORMAT = 'airlock-signed-policy/1';
/** A policy is a few keys and thresholds: bounded before parsing (one limit, for a policy file and the policy text it carries). */
export const POLICY_BOUNDS = Object.freeze({ maxBytes: 256 * 1024, maxDepth: 8 });
export const MAX_POLICY_KEYS = 64;
export const MAX_POLICY_SIGNATURES = 64;
const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const Threshold = z.number().int().min(1).max(MAX_POLICY_KEYS);
const PolicySchema = z
  .object({
    format: z.literal(POLICY_FORMAT),
    serial: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    createdAt: z.iso.datetime({ offset: true }),
    identity: z.string().regex(STORE_IDENTITY).nullable(),
    keys: z.record(
      z.string().regex(KEY_NAME, 'key names: letters, digits, ".", "_", "-"'),
      z
        .object({
          publicKey: z.string().max(1024),
          expiresAt: z.iso.datetime({ offset: true }).nullable(),
        })
        .strict(),
    ),
    threshold: z
      .object({
        default: Threshold,
        domains: z.record(z.string().regex(DOMAIN, 'must be a host name in lower case'), Threshold),
      })
      .strict(),
  })
  .strict();
export type Policy = z.infer<typeof PolicySchema>;

const EnvelopeSchema = z
  .object({
    format: z.literal(SIGNED_POLICY_FORMAT),
    /** The exact policy text that is signed (UTF-8 of this string). */
    policy: z.string().max(POLICY_BOUNDS.maxBytes),
    signatures: z.array(z.string().regex(/^[A-Za-z0-9+/]{86}==$/, 'a base64 64-byte Ed25519 signature')).max(MAX_POLICY_SIGNATURES),
  })
  .strict();
export type SignedPolicy = z.infer<typeof EnvelopeSchema>;

export interface PolicyKey {
  name: string;
  key: KeyObject;
  fingerprint: string;
  expiresAt: string | null;
}
export interface LoadedPolicy {
  policy: Policy;
  bytes: Buffer;
  signatures: Buffer[];
  keys: PolicyKey[];
}

const bad = (subject: string, why: string) => new MalformedError('AIRLOCK_BAD_POLICY', `${subject} ${why}`, { subject });

/** How a policy file (a store's, or one a user hands to trust rotate) is read: regular, bounded, never blocking. */
export const policyFileRule = (path: string) => ({ maxBytes: POLICY_BOUNDS.maxBytes, refuse: (why: string) => bad(path, why) });

/**
 * Untrusted policy JSON: bounded (size, depth) before parsing, UTF-8, one value per key. Messages
 * never quote the text (a policy path may be a symlink to any file): a position at most.
 */
function parseJson(bytes: Buffer, subject: string): unknown {
  if (bytes.length > POLICY_BOUNDS.maxBytes) throw bad(subject, `is ${bytes.length} bytes, more than the limit of ${POLICY_BOUNDS.maxBytes}`);
  const at = jsonTooDeepAt(bytes, POLICY_BOUNDS.maxDepth);
  if (at >= 0) throw bad(subject, `nests deeper than ${POLICY_BOUNDS.maxDepth} levels (at byte ${at})`);
  return parseJsonText(bytes, (why) => bad(subject, why), 'a policy');
}

function issues(e: z.ZodError): string {
  return describeIssues(e.issues, 5).join('; ');
}

/** Parse and check untrusted policy bytes (exit 4 naming `subject`): schema, keys, satisfiable thresholds. */
export function parsePolicy(bytes: Buffer, subject = 'policy'): { policy: Policy; keys: PolicyKey[] } {
  const r = PolicySchema.safeParse(parseJson(bytes, subject));
  if (!r.success) throw bad(subject, `is not a valid ${POLICY_FORMAT}: ${issues(r.error)}`);
  const policy = r.data;
  const names = Object.keys(policy.keys);
  if (names.length === 0 || names.length > MAX_POLICY_KEYS) throw bad(subject, `must name 1 to ${MAX_POLICY_KEYS} keys, not ${names.length}`);
  const keys: PolicyKey[] = [];
  const seen = new Set<string>();
  for (const name of names.sort()) {
    const k = policy.keys[name]!;
    // A private key (createPublicKey would quietly derive its public half) is refused; a public key
    // must be written exactly as airlock writes one, so nothing else can ride along in the text.
    const { key, pem, der } = parsePublicKeyText(k.publicKey, (why) => bad(subject, `key ${JSON.stringify(name)} ${why}`));
    if (pem !== k.publicKey)
      throw bad(
        subject,
        `key ${JSON.stringify(name)} is not written as an SPKI PEM public key alone (as airlock keygen's .pub and airlock trust draft write it)`,
      );
    const fp = fingerprintDer(der);
    if (seen.has(fp)) throw bad(subject, `names the key ${fp} twice (as ${JSON.stringify(name)} too): one key is one signer`);
    seen.add(fp);
    keys.push({ name, key, fingerprint: fp, expiresAt: k.expiresAt });
  }
  for (const [what, n] of [
    ['threshold.default', policy.threshold.default],
    ...Object.entries(policy.threshold.domains).map(([d, v]) => [`threshold.domains.${d}`, v] as const),
  ] as const) {
    if (n > keys.length) throw bad(subject, `${what} is ${n} but the policy has only ${keys.length} keys: nothing could ever import`);
  }
  return { policy, keys };
}

export function parseSignedPolicy(bytes: Buffer, subject: string): LoadedPolicy {
  const r = EnvelopeSchema.safeParse(parseJson(bytes, subject));
  if (!r.success) throw bad(subject, `is not a valid ${SIGNED_POLICY_FORMAT}: ${issues(r.error)}`);
  const policyBytes = Buffer.from(r.data.policy, 'utf8');
  return { ...parsePolicy(policyBytes, `${subject} (policy)`), bytes: policyBytes, signatures: r.data.signatures.map((s) => Buffer.from(s, 'base64')) };
}

export function envelope(bytes: Buffer, signatures: Buffer[]): string {
  const e: SignedPolicy = { format: SIGNED_POLICY_FORMAT, policy: bytes.toString('utf8'), signatures: signatures.map((s) => s.toString('base64')) };
  return JSON.stringify(e, null, 2) + '\n';
}

/** Keys of `policy` that count at `now`: an expired key's signature no longer counts. */
export function liveKeys(p: Pick<LoadedPolicy, 'keys'>, now: Date): PolicyKey[] {
  return p.keys.filter((k) => k.expiresAt === null || Date.parse(k.expiresAt) > now.getTime());
}

/** Names of the live keys of `p` that made one of `signatures` over `bytes`, each once. */
export function policySigners(p: Pick<LoadedPolicy, 'keys'>, bytes: Buffer, signatures: readonly Buffer[], now: Date): PolicyKey[] {
  // Each distinct signature is checked against the keys not yet matched: a key counts once, and a
  // signature verifies under one key only, so matched ones leave both pools.
  const open = liveKeys(p, now);
  const by: PolicyKey[] = [];
  const tried = new Set<string>();
  for (const s of signatures) {
    const hex = s.toString('hex');
    if (s.length !== 64 || tried.has(hex)) continue;
    tried.add(hex);
    const i = open.findIndex((k) => verify(null, bytes, k.key, s));
    if (i >= 0) by.push(open.splice(i, 1)[0]!);
  }
  return by.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function thresholdFor(p: Policy, domain: string): number {
  return p.threshold.domains[domain] ?? p.threshold.default;
}

/** The SHA-256 of a policy's bytes, as the audit log records it when the policy is accepted. */
export function policyDigest(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Accept `next` as the store's policy: signed by at least threshold.default distinct live keys of
 * the current policy, with the next serial (an old policy cannot be replayed, and the chain has no
 * gap: a missing entry is always a break). Pure decision.
 */
export function checkRotation(current: LoadedPolicy, next: LoadedPolicy, now: Date): PolicyKey[] {
  if (next.policy.serial <= current.policy.serial) {
    throw new SignatureError(
      'AIRLOCK_POLICY_REPLAY',
      `the new policy has serial ${next.policy.serial}, not above the current ${current.policy.serial}: an old policy cannot come back`,
      { subject: 'serial', current: current.policy.serial },
    );
  }
  if (next.policy.serial !== current.policy.serial + 1) {
    throw new SignatureError(
      'AIRLOCK_POLICY_SERIAL',
      `the new policy has serial ${next.policy.serial}; after ${current.policy.serial} comes ${current.policy.serial + 1} (the chain of policies has no gaps)`,
      { subject: 'serial', current: current.policy.serial },
    );
  }
  const by = policySigners(current, next.bytes, next.signatures, now);
  const need = current.policy.threshold.default;
  if (by.length < need) {
    throw new SignatureError(
      'AIRLOCK_POLICY_THRESHOLD',
      `the new policy is signed by ${by.length} distinct live key(s) of the current policy (${by.map((k) => k.name).join(', ') || 'none'}); it needs ${need} (threshold.default of policy ${current.policy.serial})`,
      { subject: 'signatures', signers: by.map((k) => k.fingerprint), need },
    );
  }
  return by;
}

/**
 * Keys of a policy about to be installed (trust init, trust rotate) must still be live: a key
 * that has expired already could never sign anything, and installing it is a mistake (exit 2).
 */
export function checkKeysLive(p: Pick<LoadedPolicy, 'keys'>, now: Date): void {
  for (const k of p.keys) {
    if (k.expiresAt !== null && Date.parse(k.expiresAt) <= now.getTime()) {
      throw new UsageError(`key ${JSON.stringify(k.name)} expires at ${k.expiresAt}, which is not in the future: an expired key cannot be installed`, {
        subject: k.name,
      });
    }
  }
}

/**
 * A new policy document from `trust init` / `trust draft` flags. Every key is written as the SPKI
 * PEM re-exported from the parsed key; a private key is refused (exit 2), never written.
 */
export function newPolicy(o: {
  keys: { name: string; pem: string; expiresAt?: string | null }[];
  threshold: number;
  domains?: Record<string, number>;
  identity?: string | null;
  serial?: number;
  now?: Date;
}): Buffer {
  const keys: Policy['keys'] = {};
  for (const k of o.keys) {
    if (keys[k.name]) throw new UsageError(`key name ${JSON.stringify(k.name)} given twice`, { subject: k.name });
    const { pem } = parsePublicKeyText(k.pem, (why) => new UsageError(`key ${JSON.stringify(k.name)} ${why}`, { subject: k.name }));
    keys[k.name] = { publicKey: pem, expiresAt: k.expiresAt ?? null };
  }
  const p: Policy = {
    format: POLICY_FORMAT,
    serial: o.serial ?? 1,
    createdAt: (o.now ?? new Date()).toISOString(),
    identity: o.identity ?? null,
    keys,
    threshold: { default: o.threshold, domains: o.domains ?? {} },
  };
  return Buffer.from(JSON.stringify(p, null, 2) + '\n', 'utf8');
}
