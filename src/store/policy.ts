import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { MalformedError, SignatureError, UsageError } from '../errors.js';
import { HOST_NAME, STORE_IDENTITY, checkJsonBounds, fingerprint } from '../package/index.js';
import { atomicWriteFile } from '../util/fsx.js';
import { storePaths } from './paths.js';

/**
 * The store's trust policy (issue 14): named Ed25519 keys (optionally expiring), how many distinct
 * keys must sign a package (a default and per-domain overrides), and the store's identity (a
 * package's `audience`). Stored as a signed envelope; every accepted policy is kept in the chain.
 */
export const POLICY_FORMAT = 'airlock-trust-policy/1';
export const SIGNED_POLICY_FORMAT = 'airlock-signed-policy/1';
/** A policy is a few keys and thresholds: bounded before parsing. */
export const POLICY_BOUNDS = Object.freeze({ maxBytes: 256 * 1024, maxDepth: 8 });
export const MAX_POLICY_KEYS = 64;
export const MAX_POLICY_SIGNATURES = 64;
const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const Threshold = z.number().int().min(1).max(MAX_POLICY_KEYS);
const PolicySchema = z.object({
  format: z.literal(POLICY_FORMAT),
  serial: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  createdAt: z.iso.datetime({ offset: true }),
  identity: z.string().regex(STORE_IDENTITY).nullable(),
  keys: z.record(z.string().regex(KEY_NAME, 'key names: letters, digits, ".", "_", "-"'), z.object({
    publicKey: z.string().max(1024),
    expiresAt: z.iso.datetime({ offset: true }).nullable(),
  }).strict()),
  threshold: z.object({
    default: Threshold,
    domains: z.record(z.string().regex(HOST_NAME, 'must be a host name'), Threshold),
  }).strict(),
}).strict();
export type Policy = z.infer<typeof PolicySchema>;

const EnvelopeSchema = z.object({
  format: z.literal(SIGNED_POLICY_FORMAT),
  /** The exact policy text that is signed (UTF-8 of this string). */
  policy: z.string().max(POLICY_BOUNDS.maxBytes),
  signatures: z.array(z.string().regex(/^[A-Za-z0-9+/]{86}==$/, 'a base64 64-byte Ed25519 signature')).max(MAX_POLICY_SIGNATURES),
}).strict();
export type SignedPolicy = z.infer<typeof EnvelopeSchema>;

export interface PolicyKey { name: string; key: KeyObject; fingerprint: string; expiresAt: string | null }
export interface LoadedPolicy { policy: Policy; bytes: Buffer; signatures: Buffer[]; keys: PolicyKey[] }

const bad = (subject: string, why: string) => new MalformedError('AIRLOCK_BAD_POLICY', `${subject} ${why}`, { subject });

function parseJson(bytes: Buffer, subject: string): unknown {
  checkJsonBounds(bytes, POLICY_BOUNDS, subject);
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    throw bad(subject, `is not UTF-8 JSON: ${(err as Error).message}`);
  }
}

function issues(e: z.ZodError): string {
  return e.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
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
    let key: KeyObject;
    try {
      key = createPublicKey(k.publicKey);
    } catch (err) {
      throw bad(subject, `key ${JSON.stringify(name)} is not a PEM public key: ${(err as Error).message}`);
    }
    if (key.asymmetricKeyType !== 'ed25519') throw bad(subject, `key ${JSON.stringify(name)} is not an Ed25519 key`);
    const fp = fingerprint(key);
    if (seen.has(fp)) throw bad(subject, `names the key ${fp} twice (as ${JSON.stringify(name)} too): one key is one signer`);
    seen.add(fp);
    keys.push({ name, key, fingerprint: fp, expiresAt: k.expiresAt });
  }
  for (const [what, n] of [['threshold.default', policy.threshold.default], ...Object.entries(policy.threshold.domains).map(([d, v]) => [`threshold.domains.${d}`, v] as const)] as const) {
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

export function trustPaths(store: string) {
  const dir = join(storePaths(store).root, 'trust');
  return { dir, policy: join(dir, 'policy.json'), chain: join(dir, 'chain'), seen: join(dir, 'seen.json') };
}

/** The store's current policy, or null when it has none (the flat trusted-keys/ rule applies). */
export async function loadPolicy(store: string): Promise<LoadedPolicy | null> {
  const { policy } = trustPaths(store);
  const bytes = await readBounded(policy);
  return bytes === null ? null : parseSignedPolicy(bytes, policy);
}

async function readBounded(path: string): Promise<Buffer | null> {
  try {
    const bytes = await readFile(path);
    if (bytes.length > POLICY_BOUNDS.maxBytes * 2) throw bad(path, `is ${bytes.length} bytes, more than the limit of ${POLICY_BOUNDS.maxBytes * 2}`);
    return bytes;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Does the store use a trust policy (else the flat trusted-keys rule; the audit log and the no-downgrade record are kept either way)? */
export async function hasPolicy(store: string): Promise<boolean> {
  return (await readBounded(trustPaths(store).policy)) !== null;
}

const chainName = (serial: number) => `${String(serial).padStart(8, '0')}.json`;

/** Write an accepted policy: first into the chain, then as the current one (caller holds the lock). */
export async function writePolicy(store: string, bytes: Buffer, signatures: Buffer[], serial: number): Promise<void> {
  const t = trustPaths(store);
  await mkdir(t.chain, { recursive: true });
  const text = envelope(bytes, signatures);
  await atomicWriteFile(join(t.chain, chainName(serial)), text);
  await atomicWriteFile(t.policy, text);
}

/**
 * Accept `next` as the store's policy: signed by at least threshold.default distinct live keys of
 * the current policy, with a higher serial (an old policy cannot be replayed). Pure decision.
 */
export function checkRotation(current: LoadedPolicy, next: LoadedPolicy, now: Date): PolicyKey[] {
  if (next.policy.serial <= current.policy.serial) {
    throw new SignatureError('AIRLOCK_POLICY_REPLAY', `the new policy has serial ${next.policy.serial}, not above the current ${current.policy.serial}: an old policy cannot come back`, { subject: 'serial', current: current.policy.serial });
  }
  const by = policySigners(current, next.bytes, next.signatures, now);
  const need = current.policy.threshold.default;
  if (by.length < need) {
    throw new SignatureError('AIRLOCK_POLICY_THRESHOLD', `the new policy is signed by ${by.length} distinct live key(s) of the current policy (${by.map((k) => k.name).join(', ') || 'none'}); it needs ${need} (threshold.default of policy ${current.policy.serial})`, { subject: 'signatures', signers: by.map((k) => k.fingerprint), need });
  }
  return by;
}

/** Every policy the store accepted, oldest first, each checked against the one before (trust show). */
export async function verifyChain(store: string): Promise<{ serials: number[]; ok: boolean; problem: string | null }> {
  const { chain } = trustPaths(store);
  const names = (await readdir(chain).catch(() => [] as string[])).filter((n) => /^\d{8}\.json$/.test(n)).sort();
  const serials: number[] = [];
  let prev: LoadedPolicy | null = null;
  for (const name of names) {
    const path = join(chain, name);
    try {
      const p = parseSignedPolicy((await readBounded(path))!, path);
      if (p.policy.serial !== Number(name.slice(0, 8))) throw bad(path, `holds serial ${p.policy.serial}`);
      if (prev) checkRotation(prev, p, new Date(p.policy.createdAt));
      serials.push(p.policy.serial);
      prev = p;
    } catch (err) {
      return { serials, ok: false, problem: `${name}: ${(err as Error).message}` };
    }
  }
  return { serials, ok: true, problem: null };
}

/** A new policy document from `trust init` flags. */
export function newPolicy(o: { keys: { name: string; pem: string; expiresAt?: string | null }[]; threshold: number; domains?: Record<string, number>; identity?: string | null; serial?: number; now?: Date }): Buffer {
  const keys: Policy['keys'] = {};
  for (const k of o.keys) {
    if (keys[k.name]) throw new UsageError(`key name ${JSON.stringify(k.name)} given twice`, { subject: k.name });
    keys[k.name] = { publicKey: k.pem, expiresAt: k.expiresAt ?? null };
  }
  const p: Policy = {
    format: POLICY_FORMAT, serial: o.serial ?? 1, createdAt: (o.now ?? new Date()).toISOString(), identity: o.identity ?? null,
    keys, threshold: { default: o.threshold, domains: o.domains ?? {} },
  };
  return Buffer.from(JSON.stringify(p, null, 2) + '\n', 'utf8');
}
