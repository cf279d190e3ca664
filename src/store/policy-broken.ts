import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { VerificationError } from '../errors.js';
import type { trustPaths } from './paths.js';

/**
 * A store that has had a trust policy and can no longer show an intact one (a missing policy.json,
 * a chain entry deleted, edited or out of order): exit 4, never a quiet fall back to --trust.
 */
export const brokenPolicy = (subject: string, why: string, restore: string, until = `${restore} is restored from a backup`) =>
  new VerificationError('AIRLOCK_POLICY_BROKEN', `${subject} ${why}; the store's trust policy cannot be trusted: imports are refused until ${until}`, {
    subject,
  });

type TrustPaths = ReturnType<typeof trustPaths>;
const there = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

/** The policy a logged trust init accepted is nowhere: deleted, or its staged copy lost or damaged after a crash. */
export async function lostInit(t: TrustPaths, holdsOther: boolean): Promise<VerificationError> {
  const staged = (await there(t.staged))
    ? `${t.staged} is there but is not the policy it accepted (edited or replaced)`
    : `if a crash cut that trust init short, its staged copy ${t.staged} was lost too`;
  // A store holding nothing but that line may have no policy to restore (one that never reached the chain): it can be started anew.
  const until = holdsOther
    ? undefined
    : `${t.dir} is restored from a backup, or the store, which holds nothing else, is removed and started anew with airlock trust init`;
  return brokenPolicy(
    t.policy,
    `is missing, and so is its chain, yet the audit log records a trust init; ${staged}: a store that had a trust policy never falls back to --trust`,
    t.dir,
    until,
  );
}

/** The chain ends before the policy the log accepted last: an entry removed, or the staged copy of a change a crash cut short lost or damaged. */
export async function lostEntry(t: TrustPaths, recorded: number, ends: number, entryName: string): Promise<VerificationError> {
  const staged = (await there(t.staged))
    ? `${t.staged} is there but is not the policy the log accepted (edited or replaced)`
    : `a newer policy was removed, or ${t.staged}, the staged copy of a change a crash cut short, was lost: then running that trust rotate again with the same policy and signatures writes it`;
  return brokenPolicy(
    join(t.chain, entryName),
    `is missing: the audit log records policy ${recorded} as accepted, but the chain ends at ${ends} (${staged})`,
    t.dir,
  );
}
