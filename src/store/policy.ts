import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AirlockError } from '../errors.js';
import { atomicWriteFile, describeFsError, readRegularFile, readRegularFileIfExists } from '../util/fsx.js';
import { trustPaths } from './paths.js';
import { auditHistory } from './audit/chain.js';
import { checkStoreFolder } from './location.js';
import { settled } from './settle.js';
import { brokenPolicy, lostEntry, lostInit } from './policy-broken.js';
import { holdsRecords } from './audit/traces.js';
import { checkRotation, envelope, parseSignedPolicy, policyDigest, policyFileRule, type LoadedPolicy } from './policy-document.js';

/** The store's trust policy on disk: STORE/trust/policy.json and its chain of every accepted policy (the document itself: policy-document.ts). */
export * from './policy-document.js';

export { trustPaths };

/** Every policy a store accepted, root first, each checked against the one before; `current` is the last. */
export interface PolicyChain {
  current: LoadedPolicy;
  serials: number[];
}

const CHAIN_ENTRY = /^\d{8}\.json$/;

/** The chain's entry names, sorted; null when the store has no chain folder. */
async function chainNames(chain: string, trustDir: string): Promise<string[] | null> {
  try {
    return (await readdir(chain)).filter((n) => CHAIN_ENTRY.test(n)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw brokenPolicy(chain, describeFsError(err), trustDir);
  }
}

/**
 * The store's policy chain, verified from its root (serial 1) at every use: entries 1..N with no
 * gap, each a valid policy holding its own serial, each rotation signed by threshold.default live
 * keys of the policy before it, and policy.json byte for byte the last entry. null only when the
 * store never had a policy (no policy.json, no chain entry, no trust init in the audit log; an
 * empty chain folder is an init cut short before its line). A store that had one never falls back
 * to --trust: anything missing or inconsistent is AIRLOCK_POLICY_BROKEN (exit 4).
 *
 * A policy change writes its envelope to trust/staged.json, then its audit line (the commit
 * point), then the chain entry and policy.json (writePolicy). A crash after the line leaves the
 * staged copy the line names (its SHA-256): it stands for what was not yet written, and the next
 * policy change finishes writing it (finishPolicy). A staged copy the log does not name is a
 * change that never happened, and is ignored.
 *
 * Outside the lock a policy change may run while this reads: a verdict of "broken" is only given
 * once the files held still for a pass and no other live process holds the store lock (at most 3 s).
 */
export async function loadPolicyChain(store: string): Promise<PolicyChain | null> {
  return settled(store, () => loadOnce(store), POLICY_BROKEN);
}

const POLICY_BROKEN: ReadonlySet<string> = new Set(['AIRLOCK_POLICY_BROKEN']);

/**
 * The staged envelope of the policy change the audit log records last (serial `recorded`), when a
 * crash left it unwritten: its policy bytes must have the SHA-256 the line recorded. Else null.
 */
async function committedStage(
  t: ReturnType<typeof trustPaths>,
  recorded: number,
  digests: ReadonlyMap<number, string>,
  given?: Buffer,
): Promise<Buffer | null> {
  const accepted = digests.get(recorded);
  if (accepted === undefined) return null;
  const bytes = given ?? (await readRegularFileIfExists(t.staged, policyFileRule(t.staged)));
  if (bytes === null) return null;
  let staged: LoadedPolicy;
  try {
    staged = parseSignedPolicy(bytes, t.staged);
  } catch {
    return null; // not what a policy change wrote: ignored like any other change that never happened
  }
  if (policyDigest(staged.bytes) !== accepted || staged.policy.serial !== recorded) return null;
  // Once its entry is in the chain, a staged copy only stands for policy.json, and only as that entry's exact bytes.
  const entry = join(t.chain, chainName(recorded));
  const written = await readRegularFileIfExists(entry, policyFileRule(entry));
  return written === null || written.equals(bytes) ? bytes : null;
}

async function loadOnce(store: string, given?: Buffer): Promise<PolicyChain | null> {
  const t = trustPaths(store);
  const broken = (subject: string, why: string, restore = t.dir) => brokenPolicy(subject, why, restore);
  // trust/ or trust/chain a symbolic link (another store's policy) is refused, never read as this store's.
  await checkStoreFolder(store, t.dir);
  await checkStoreFolder(store, t.chain);
  const onDisk = await readRegularFileIfExists(t.policy, policyFileRule(t.policy));
  const found = await chainNames(t.chain, t.dir);
  const history = await auditHistory(store);
  const recorded = history.policySerial;
  // A change cut short after its line: its staged copy is the entry (and the policy.json) it did not write yet.
  const staged = recorded > 0 ? await committedStage(t, recorded, history.policyDigests, given) : null;
  const names = staged && (found ?? []).length === recorded - 1 ? [...(found ?? []), chainName(recorded)] : found;
  const current = staged ?? onDisk;
  if (current === null && (names === null || names.length === 0)) {
    if (recorded > 0) throw await lostInit(t, (await holdsRecords(store)) !== null);
    return null;
  }
  if (names === null) throw broken(t.chain, 'is missing, yet this store has had a trust policy (policy.json is there)');
  if (names.length === 0)
    throw broken(
      join(t.chain, chainName(1)),
      `is missing and the chain holds no policy, yet this store has had a trust policy (${current === null ? 'its chain folder' : 'policy.json'} is there)`,
    );
  if (current === null)
    throw broken(
      t.policy,
      `is missing, yet ${t.chain} holds ${names.length} accepted ${names.length === 1 ? 'policy' : 'policies'}: a store that had a trust policy never falls back to --trust`,
    );
  // trust init always records itself in the audit log: a policy the log does not know of came in
  // some other way (the log deleted or rewritten with the policy), and is not the store's.
  if (recorded === 0)
    throw broken(
      t.policy,
      `is there, but the audit log records no trust init (the log was deleted or rewritten): a trust policy is only taken from airlock trust init`,
      join(store, 'audit.log'),
    );
  const serials: number[] = [];
  const entries: Buffer[] = [];
  let prev: LoadedPolicy | null = null;
  let prevBytes: Buffer | null = null;
  for (const [i, name] of names.entries()) {
    const serial = i + 1;
    const virtual = staged !== null && serial === recorded && (found ?? []).length < recorded;
    const path = virtual ? t.staged : join(t.chain, name);
    if (name !== chainName(serial)) {
      throw broken(
        join(t.chain, chainName(serial)),
        serial === 1
          ? 'is missing: the chain does not start at its root (serial 1)'
          : `is missing: the chain goes from ${serial - 1} to ${Number(name.slice(0, 8))}`,
      );
    }
    const bytes = virtual ? staged : await readRegularFile(path, policyFileRule(path));
    entries.push(bytes);
    const p = parseSignedPolicy(bytes, path);
    if (p.policy.serial !== serial) throw broken(path, `holds serial ${p.policy.serial}, not ${serial}`);
    if (prev) {
      try {
        checkRotation(prev, p, new Date(p.policy.createdAt));
      } catch (err) {
        if (!(err instanceof AirlockError)) throw err;
        throw broken(path, `was not accepted by policy ${prev.policy.serial}: ${err.message}`);
      }
    }
    const accepted = history.policyDigests.get(serial);
    if (accepted !== undefined && policyDigest(p.bytes) !== accepted) {
      throw broken(
        path,
        `is not the policy the audit log recorded as accepted (policy ${serial}, sha256 ${accepted.slice(0, 12)}…): it was changed after it was accepted`,
        t.dir,
      );
    }
    serials.push(serial);
    prev = p;
    prevBytes = bytes;
  }
  if (!current.equals(prevBytes!)) throw broken(t.policy, `differs from ${join(t.chain, names[names.length - 1]!)}, the last policy the chain accepted`);
  // Cut short after its line, policy.json is still the policy before (none before a first one).
  const before = entries.length > 1 ? entries[entries.length - 2]! : null;
  if (staged && onDisk !== null && !onDisk.equals(staged) && !(before && onDisk.equals(before)))
    throw broken(t.policy, `is neither the policy the audit log accepted last (policy ${recorded}) nor the one before it`);
  if (staged && onDisk === null && recorded > 1) throw broken(t.policy, `is missing, yet ${t.chain} holds ${recorded - 1} accepted policies`);
  if (recorded > serials.length) throw await lostEntry(t, recorded, serials.length, chainName(serials.length + 1));
  return { current: prev!, serials };
}

/** The store's current policy, its chain verified (loadPolicyChain), or null when it never had one (the flat trusted-keys/ rule applies). */
export async function loadPolicy(store: string): Promise<LoadedPolicy | null> {
  return (await loadPolicyChain(store))?.current ?? null;
}

/** Does the store use a trust policy (else the flat trusted-keys rule; the audit log and the no-downgrade record are kept either way)? */
export async function hasPolicy(store: string): Promise<boolean> {
  return (await loadPolicyChain(store)) !== null;
}

const chainName = (serial: number) => `${String(serial).padStart(8, '0')}.json`;

/** Stage a policy change before its audit line (caller holds the lock): see loadPolicyChain. */
export async function stagePolicy(store: string, bytes: Buffer, signatures: Buffer[]): Promise<void> {
  await atomicWriteFile(trustPaths(store).staged, envelope(bytes, signatures));
}

/**
 * A policy change a crash cut short after its line, whose staged copy was then lost (deleted, or
 * the store copied without it): the same command again (the serial and SHA-256 its line recorded,
 * signed as its predecessor requires) stands for the lost copy, since the log accepted it already.
 * Returns the envelope to stage and the keys of the policy before that signed it (caller holds the
 * lock), or null when this is not that case: a staged file that is there (even damaged) is never
 * overwritten, and an entry already written needs nothing.
 */
export async function lostStage(store: string, next: LoadedPolicy): Promise<{ envelope: Buffer; by: string[] } | null> {
  const t = trustPaths(store);
  const history = await auditHistory(store);
  const serial = history.policySerial;
  if (serial === 0 || next.policy.serial !== serial || history.policyDigests.get(serial) !== policyDigest(next.bytes)) return null;
  if (
    await lstat(t.staged).then(
      () => true,
      (err: NodeJS.ErrnoException) => err.code !== 'ENOENT',
    )
  )
    return null;
  const entry = join(t.chain, chainName(serial));
  if ((await readRegularFileIfExists(entry, policyFileRule(entry))) !== null) return null;
  const given = Buffer.from(envelope(next.bytes, next.signatures));
  let by: string[] = [];
  if (serial > 1) {
    // Signed as its predecessor requires, checked first so that a refusal names the signatures.
    const prevPath = join(t.chain, chainName(serial - 1));
    const prev = parseSignedPolicy(await readRegularFile(prevPath, policyFileRule(prevPath)), prevPath);
    by = checkRotation(prev, parseSignedPolicy(given, 'the policy given'), new Date(next.policy.createdAt)).map((k) => k.name);
  }
  await loadOnce(store, given); // then the whole chain with it must verify, as at every use
  return { envelope: given, by };
}

/** Drop the staged copy of a change that did not take effect (its line was not written, or was taken back). */
export async function unstagePolicy(store: string): Promise<void> {
  await rm(trustPaths(store).staged, { force: true });
}

/**
 * Write an accepted policy after its line (caller holds the lock): into the chain, then as the
 * current one, then drop the staged copy. A failure takes back the entry it wrote.
 */
export async function writePolicy(store: string, bytes: Buffer, signatures: Buffer[], serial: number): Promise<void> {
  const t = trustPaths(store);
  await mkdir(t.chain, { recursive: true });
  const text = envelope(bytes, signatures);
  const entry = join(t.chain, chainName(serial));
  await atomicWriteFile(entry, text);
  try {
    await atomicWriteFile(t.policy, text);
  } catch (err) {
    await rm(entry, { force: true }).catch(() => {});
    throw err;
  }
  await unstagePolicy(store);
}

/**
 * Finish a policy change a crash cut short after its line (caller holds the lock, before a new
 * change): write the entry and policy.json its staged copy stands for, once the chain with it
 * verifies. A staged copy the log does not name is left as it is.
 */
export async function finishPolicy(store: string): Promise<void> {
  const t = trustPaths(store);
  await checkStoreFolder(store, t.dir);
  await checkStoreFolder(store, t.chain);
  // The whole chain, the staged copy in it, must verify first: a refusal writes nothing and removes nothing.
  await loadPolicyChain(store);
  const history = await auditHistory(store);
  const staged = await committedStage(t, history.policySerial, history.policyDigests);
  if (staged === null) return; // none, or one no line names: a change that never happened (the next one overwrites it)
  await mkdir(t.chain, { recursive: true });
  const entry = join(t.chain, chainName(history.policySerial));
  if ((await readRegularFileIfExists(entry, policyFileRule(entry))) === null) await atomicWriteFile(entry, staged.toString('utf8'));
  await atomicWriteFile(t.policy, staged.toString('utf8'));
  await unstagePolicy(store);
}

/** The chain as a report (tests, tools): ok, or the first problem in words. */
export async function verifyChain(store: string): Promise<{ serials: number[]; ok: boolean; problem: string | null; code: string | null }> {
  try {
    return { serials: (await loadPolicyChain(store))?.serials ?? [], ok: true, problem: null, code: null };
  } catch (err) {
    if (!(err instanceof AirlockError)) throw err;
    return { serials: [], ok: false, problem: err.message, code: err.code };
  }
}
