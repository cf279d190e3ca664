import type { LockOptions } from './lock.js';
import { sign } from 'node:crypto';
import { stat, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError, outputExists } from '../errors.js';
import { fingerprint, loadPrivateKey } from '../package/keys.js';
import { describeFsError, readRegularFile } from '../util/fsx.js';
import { escapeControls, shown } from '../util/terminal.js';
import { readSeen } from './admit.js';
import { POLICY_BOUNDS, loadPolicyChain, policyFileRule } from './policy.js';
import { policyFromFlags, type PolicyFlags } from './policy-flags.js';
import { describe as describePolicy, initPolicy, readNewPolicy, rotatePolicy } from './trust-ops.js';

/** What a `trust` subcommand prints: one JSON document, or its prose (built only when shown). */
export interface TrustReport {
  json: Record<string, unknown>;
  text: () => string;
}

/** A raw Ed25519 signature is 64 bytes; a signature file is never read past this. */
const MAX_SIG_FILE = 4096;

/** A file the user named: regular, bounded, never blocking; refused in plain words naming it as given (exit 2). */
function readUserFile(cwd: string, given: string, maxBytes: number): Promise<Buffer> {
  return readRegularFile(resolve(cwd, given), { maxBytes, refuse: (why) => new UsageError(`${given} ${why}`, { subject: given }) });
}

/**
 * A policy document the user hands to trust rotate: unreadable is a usage error (exit 2); larger
 * than the one policy limit is the policy's fault (AIRLOCK_BAD_POLICY, exit 4, as on any read).
 */
async function readPolicyDocument(cwd: string, given: string): Promise<Buffer> {
  const path = resolve(cwd, given);
  const rule = policyFileRule(given);
  return readRegularFile(path, { maxBytes: rule.maxBytes, refuse: (why) => new UsageError(`${given} ${why}`, { subject: given }) }).catch(
    async (err: unknown) => {
      // Only the size refusal is the document's fault: told apart by the file's size, not by words.
      const size = await stat(path).then(
        (st) => (st.isFile() ? st.size : 0),
        () => 0,
      );
      throw size > rule.maxBytes ? rule.refuse(`is ${size} bytes, more than the limit of ${rule.maxBytes}`) : err;
    },
  );
}

/** A new file (--out, checked by the command first) written whole; never over an existing one. */
async function writeNew(out: string, data: Uint8Array): Promise<void> {
  await writeFile(out, data, { flag: 'wx' }).catch((err: unknown): never => {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw outputExists(out, 'choose another --out');
    throw new UsageError(`cannot write ${out}: ${describeFsError(err, 'write')}`, { subject: out });
  });
}

/** trust init: the first policy (serial 1) from the flags, signed by the --sign-key files, installed. */
export async function initFromFlags(store: () => string, v: PolicyFlags, signKeys: string[], cwd: string, lock?: LockOptions): Promise<TrustReport> {
  const bytes = await policyFromFlags(v, cwd, 1);
  const keys = await Promise.all(signKeys.map((p) => loadPrivateKey(resolve(cwd, p), { shown: p, flag: '--sign-key' })));
  const p = await initPolicy(
    store(),
    bytes,
    keys.map((k) => sign(null, bytes, k)),
    { lock },
  );
  return {
    json: {
      ok: true,
      store: store(),
      serial: 1,
      keys: p.keys.map((k) => ({ name: k.name, fingerprint: k.fingerprint, expiresAt: k.expiresAt })),
      threshold: p.policy.threshold,
      identity: p.policy.identity,
    },
    text: () => shown`trust policy 1 installed in ${store()}: ${describePolicy(p)}`,
  };
}

/** trust draft: a new policy document (for rotate) from the flags, written to `out`, not installed. */
export async function draftToFile(out: string, v: PolicyFlags, serial: number, cwd: string): Promise<TrustReport> {
  await writeNew(out, await policyFromFlags(v, cwd, serial));
  return {
    json: { ok: true, policy: out, serial },
    text: () => shown`wrote ${out} (serial ${serial}); sign it with airlock trust sign, then airlock trust rotate`,
  };
}

/** trust sign: the raw Ed25519 signature of the exact bytes of the policy document, written to `out`. */
export async function signPolicyFile(given: string, keyFile: string, out: string, cwd: string): Promise<TrustReport> {
  const key = await loadPrivateKey(resolve(cwd, keyFile), { shown: keyFile, flag: '--key' });
  const bytes = await readUserFile(cwd, given, POLICY_BOUNDS.maxBytes);
  await writeNew(out, sign(null, bytes, key));
  return { json: { ok: true, signature: out, signer: fingerprint(key) }, text: () => shown`wrote ${out} (signed by ${fingerprint(key)})` };
}

/** trust rotate: the policy document `given` with its signature files, accepted by the current policy. */
export async function rotateFromFiles(store: () => string, given: string, sigFiles: string[], cwd: string, lock?: LockOptions): Promise<TrustReport> {
  const bytes = await readPolicyDocument(cwd, given);
  const sigs = await Promise.all(
    sigFiles.map(async (p) => {
      const sig = await readUserFile(cwd, p, MAX_SIG_FILE);
      // Counted silently as no signature, a damaged file would only surface as a threshold refusal.
      if (sig.length !== 64)
        throw new UsageError(
          `${escapeControls(p)} is ${sig.length} bytes, not a raw 64-byte Ed25519 signature (airlock trust sign writes one); sign the policy again`,
          { subject: p },
          'AIRLOCK_BAD_SIGNATURE',
        );
      return sig;
    }),
  );
  const r = await rotatePolicy(store(), readNewPolicy(bytes, sigs, given), { lock });
  return {
    json: { ok: true, store: store(), ...r },
    text: () =>
      r.restored
        ? shown`trust policy ${r.serial} restored: the audit log had accepted it, and a crash had left it unwritten`
        : shown`trust policy ${r.previous} -> ${r.serial}, signed by ${r.signers.join(', ')}`,
  };
}

/** trust show: the current policy, its chain (verified from its root: broken is exit 4) and the highest sequence seen per domain. */
export async function showPolicy(s: string): Promise<TrustReport> {
  const c = await loadPolicyChain(s);
  if (!c)
    return {
      json: { ok: true, store: s, policy: null },
      text: () => shown`store ${s} has no trust policy: imports need one key of --trust or ${s}/trusted-keys/*.pub`,
    };
  const p = c.current;
  const chain = { serials: c.serials, ok: true, problem: null };
  const seen = await readSeen(s);
  const now = Date.now();
  const keys = p.keys.map((k) => ({
    name: k.name,
    fingerprint: k.fingerprint,
    expiresAt: k.expiresAt,
    live: k.expiresAt === null || Date.parse(k.expiresAt) > now,
  }));
  return {
    json: {
      ok: true,
      store: s,
      serial: p.policy.serial,
      createdAt: p.policy.createdAt,
      identity: p.policy.identity,
      threshold: p.policy.threshold,
      keys,
      chain,
      seen: seen.domains,
    },
    text: () =>
      [
        shown`policy ${p.policy.serial} (${p.policy.createdAt})${p.policy.identity ? shown`, store identity ${p.policy.identity}` : ''}`,
        shown`threshold ${p.policy.threshold.default}` +
          Object.entries(p.policy.threshold.domains)
            .map(([d, n]) => shown`, ${d}: ${n}`)
            .join(''),
        ...keys.map(
          (k) => shown`key ${k.name} ${k.fingerprint}` + (k.expiresAt ? shown` expires ${k.expiresAt}` : '') + (k.live ? '' : ' (EXPIRED: does not count)'),
        ),
        `chain ${chain.serials.join(' -> ')}: every rotation signed by its predecessor's threshold, policy.json its last entry`,
        ...Object.entries(seen.domains).map(([d, v]) => shown`seen ${d}: sequence ${v.sequence} (${v.version})`),
      ].join('\n'),
  };
}
