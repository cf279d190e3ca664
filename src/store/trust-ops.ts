import { AirlockError, EXIT, UsageError } from '../errors.js';
import { acknowledgePending, appendAudit, appendAuditLocked, auditNotApplied } from './audit/append.js';
import type { AuditLine } from './audit/files.js';
import { auditWritable } from './audit/chain.js';
import { policyDetail } from './audit/learn.js';
import { createStore, removeCreated, storeKind } from './location.js';
import { notALibrary } from './library.js';
import { withLock, type LockOptions } from './lock.js';
import {
  checkKeysLive,
  checkRotation,
  loadPolicy,
  loadPolicyChain,
  parsePolicy,
  parseSignedPolicy,
  policyDigest,
  writePolicy,
  stagePolicy,
  unstagePolicy,
  finishPolicy,
  lostStage,
  SIGNED_POLICY_FORMAT,
  type LoadedPolicy,
} from './policy.js';

/**
 * `airlock trust init`: the store's first policy (serial 1), its root of trust, set by the operator
 * on the isolated side (as TUF's root is installed out of band). Creates the store if missing.
 */
export async function initPolicy(store: string, bytes: Buffer, signatures: Buffer[], o: { now?: Date; lock?: LockOptions } = {}): Promise<LoadedPolicy> {
  const parsed = { ...parsePolicy(bytes, 'the new policy'), bytes, signatures };
  if (parsed.policy.serial !== 1) throw new UsageError(`a first policy has serial 1, not ${parsed.policy.serial}`, { subject: 'serial' });
  checkKeysLive(parsed, o.now ?? new Date());
  const kind = await storeKind(store);
  if (kind === 'dir') await notALibrary(store);
  const created = kind === 'missing' ? await createStore(store) : [];
  return withLock(
    store,
    async () => {
      // A store that had a policy and lost part of it is broken (exit 4), not a place for a new root.
      // A policy a crash left staged after its line is the store's policy: this refusal writes nothing.
      const current = (await loadPolicyChain(store))?.current;
      if (current)
        throw new AirlockError(
          'AIRLOCK_EXISTS',
          `store ${store} already has a trust policy (serial ${current.policy.serial}); change it with airlock trust rotate`,
          EXIT.USAGE,
          { subject: store },
        );
      await auditWritable(store); // a chain that does not verify refuses (exit 4) before the policy is written
      await acknowledgePending(store); // a first line a crash left without its head, adopted before any record is written
      // The line first, as for every change: a policy is never in place without its record. Staged
      // before it, so that a crash after the line leaves what the line accepted (loadPolicyChain).
      await stagePolicy(store, bytes, signatures);
      const line = await appendAuditLocked(store, {
        command: 'trust init',
        outcome: 'policy-init',
        detail: policyDetail(describe(parsed), policyDigest(parsed.bytes)),
      }).catch(unstaged(store));
      await writePolicy(store, bytes, signatures, 1).catch(notApplied(store, line));
      return parsed;
    },
    o.lock,
  ).catch(async (err: unknown) => {
    await removeCreated(created); // only folders left empty: a store this command made goes away
    throw err;
  });
}

/** Read what `trust rotate --policy FILE` was given: a signed envelope, or plain policy bytes plus raw signature files. */
export function readNewPolicy(bytes: Buffer, signatures: Buffer[], subject: string): LoadedPolicy {
  const looksSigned = bytes.includes(Buffer.from(`"${SIGNED_POLICY_FORMAT}"`));
  if (looksSigned) {
    const p = parseSignedPolicy(bytes, subject);
    return { ...p, signatures: [...p.signatures, ...signatures] };
  }
  return { ...parsePolicy(bytes, subject), bytes, signatures };
}

/**
 * `airlock trust rotate`: accept `next` only when threshold.default distinct live keys of the
 * current policy signed its exact bytes and it has the next serial (checkRotation). The refusal is
 * recorded in the audit log (exit 4); the accepted policy joins the chain.
 */
export async function rotatePolicy(store: string, next: LoadedPolicy, o: { now?: Date; lock?: LockOptions } = {}): Promise<Rotated> {
  const now = o.now ?? new Date();
  checkKeysLive(next, now);
  if ((await storeKind(store)) === 'missing') throw new UsageError(`store ${store} does not exist; start it with airlock trust init`, { subject: store });
  try {
    return await withLock(
      store,
      async () => {
        const lost = await lostStage(store, next);
        if (lost) return restore(store, next, lost.by);
        // Checked against the policy in force (one a crash left staged after its line included) before anything is written.
        const current = await loadPolicy(store);
        if (!current) throw new UsageError(`store ${store} has no trust policy yet; start one with airlock trust init`, { subject: store });
        const by = checkRotation(current, next, now);
        await auditWritable(store); // a chain that does not verify refuses (exit 4) before the policy is written
        await acknowledgePending(store); // a first line a crash left without its head, adopted before any record is written
        await finishPolicy(store); // a change a crash cut short after its line is written out first
        await stagePolicy(store, next.bytes, next.signatures);
        const line = await appendAuditLocked(store, {
          command: 'trust rotate',
          outcome: 'policy-rotated',
          signers: by.map((k) => k.fingerprint),
          detail: policyDetail(
            `serial ${current.policy.serial} -> ${next.policy.serial}, signed by ${by.map((k) => k.name).join(', ')}; ${describe(next)}`,
            policyDigest(next.bytes),
          ),
        }).catch(unstaged(store));
        await writePolicy(store, next.bytes, next.signatures, next.policy.serial).catch(notApplied(store, line));
        return { previous: current.policy.serial, serial: next.policy.serial, signers: by.map((k) => k.name) };
      },
      o.lock,
    );
  } catch (err) {
    if (err instanceof AirlockError && err.exitCode === EXIT.VERIFICATION && (await loadPolicy(store).then(Boolean, () => false))) {
      await appendAudit(store, {
        command: 'trust rotate',
        outcome: 'refused',
        reason: err.code,
        signers: (err.details.signers as string[] | undefined) ?? [],
        detail: err.message.slice(0, 2000),
      });
    }
    throw err;
  }
}

export interface Rotated {
  previous: number;
  serial: number;
  signers: string[];
  /** The change was the log's already (a crash cut it short, then its staged copy was lost): written out, not accepted anew. */
  restored?: true;
}

/** Write out again the policy change the log accepted and a crash left unwritten (lostStage): its line records that it was restored. */
async function restore(store: string, next: LoadedPolicy, by: string[]): Promise<Rotated> {
  await stagePolicy(store, next.bytes, next.signatures);
  await appendAuditLocked(store, {
    command: 'trust rotate',
    outcome: 'policy-restored',
    signers: [],
    detail: `policy ${next.policy.serial} written out again, as the audit log accepted it: the staged copy a crash left was lost; policy sha256 ${policyDigest(next.bytes)}`,
  }).catch(unstaged(store));
  await finishPolicy(store);
  return { previous: next.policy.serial - 1, serial: next.policy.serial, signers: by, restored: true };
}

/** A policy write that failed after its line: a `failed` line takes the line back, the staged copy goes, and the error goes on. */
const notApplied = (store: string, line: AuditLine) => async (err: unknown) => {
  await auditNotApplied(store, line, err);
  await unstagePolicy(store);
  throw err;
};

/** The line could not be written: the change did not happen, and its staged copy goes. */
const unstaged = (store: string) => async (err: unknown) => {
  await unstagePolicy(store).catch(() => {});
  throw err;
};

export function describe(p: Pick<LoadedPolicy, 'policy' | 'keys'>): string {
  const d = Object.entries(p.policy.threshold.domains)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return (
    `keys ${p.keys.map((k) => k.name + (k.expiresAt ? ` (until ${k.expiresAt})` : '')).join(', ')}; threshold ${p.policy.threshold.default}${d ? ` (${d})` : ''}` +
    (p.policy.identity ? `; identity ${p.policy.identity}` : '')
  );
}
