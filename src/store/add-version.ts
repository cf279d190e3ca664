import type { KeyObject } from 'node:crypto';
import type { ArchiveLimits } from '../archive/index.js';
import type { Manifest } from '../package/index.js';
import { recordSeen, type Admission, type AllowDowngrade } from './admit.js';
import { activateLocked } from './activate.js';
import { appendAuditLocked } from './audit/append.js';
import { auditHistory, auditWritable } from './audit/chain.js';
import type { AuditEvent } from './audit/files.js';
import type { AuditHistory } from './audit/learn.js';
import { describeAdmission } from './describe.js';
import { checkVersionsFolder } from './holdings.js';
import type { StoreLock } from './lock.js';
import type { ProgressEvent } from './progress.js';
import { readState } from './state.js';
import { cleanStaging, commitStaged, dropStaging, makeStaging } from './staging.js';

/**
 * How every import adds a version — a full package, its volumes, or a delta rebuilt on a stored
 * base: the same checks under the lock before any work, the same staging folder, the same commit
 * (commitStaged: audit line, then one rename) and the same activation. Each form only says how
 * it fills the staging folder and what its audit line reads.
 */
export interface ImportOptions {
  store: string;
  trust: KeyObject[];
  allowUnsigned?: boolean;
  activate?: boolean;
  /** The caller activates the version itself afterwards (after preparing it): state.json is read before anything is staged, as for activate. */
  willActivate?: boolean;
  onProgress?: (e: ProgressEvent) => void;
  limits?: Partial<ArchiveLimits>;
  lockTimeoutMs?: number;
  /** Stops the import (SIGINT/SIGTERM): every write ends, staging is removed, the lock released. */
  signal?: AbortSignal;
  /** Import even when a freshness rule (downgrade, expiry, audience) refuses, or only the rules named; audited. */
  allowDowngrade?: AllowDowngrade;
}
export interface ImportResult {
  version: string;
  status: 'imported' | 'unchanged';
  activated: boolean;
  signers?: string[];
  overridden?: string[];
}

/**
 * Under the lock, before any work or clean-up, so that a refusal changes nothing: the audit chain
 * verifies (commitStaged checks again), state.json reads when the version is to be activated
 * (activation comes after the commit), and the versions folder is the store's own.
 */
export async function beginLocked(o: ImportOptions): Promise<AuditHistory> {
  const history = await auditWritable(o.store);
  if (o.activate || o.willActivate) await readState(o.store);
  await checkVersionsFolder(o.store);
  await cleanStaging(o.store);
  return history;
}

/**
 * The version is already in the store with this content: record it, activate it if asked. When
 * it is the newest import the audit log records for its domain, its order goes into trust/seen.json
 * where that holds a lower one or none (an import a crash cut short after its commit, before its
 * seen order): it only ever raises the guard against downgrades, never to below what the log holds.
 */
export async function keepExisting(
  o: ImportOptions,
  label: string,
  event: AuditEvent,
  admission: Admission,
  seen: Pick<Manifest, 'domain' | 'version' | 'sequence' | 'createdAt'>,
): Promise<ImportResult> {
  await appendAuditLocked(o.store, event);
  // recordSeen never writes below the newest import the log records; here the log must record one.
  if ((await auditHistory(o.store)).importedSequence.has(seen.domain)) await recordSeen(o.store, seen);
  if (o.activate) await activateLocked(o.store, label, { command: 'import --activate' });
  return { version: label, status: 'unchanged', activated: Boolean(o.activate), ...admissionFields(admission) };
}

export interface Staged {
  /** The `imported` line of the audit log. */
  audit: AuditEvent;
  /** The manifest whose sequence trust/seen.json records once the version is in. */
  seen: Pick<Manifest, 'domain' | 'version' | 'sequence' | 'createdAt'>;
  admission: Admission;
}

/**
 * Stage, commit, activate. `fill` builds the complete, fsynced version in the staging folder and
 * says what to record; a failure anywhere before the commit removes the staging folder and
 * leaves the store as it was.
 */
export async function addVersion(o: ImportOptions, lock: StoreLock, label: string, fill: (staging: string) => Promise<Staged>): Promise<ImportResult> {
  const { store, signal, onProgress } = o;
  const staging = await makeStaging(store);
  let staged: Staged;
  try {
    staged = await fill(staging);
    await commitStaged({ store, staging, label, lock, signal, seen: staged.seen, audit: staged.audit });
  } catch (err) {
    await dropStaging(staging, store);
    throw err;
  }
  onProgress?.({ phase: 'committed', version: label });
  if (o.activate) {
    await activateLocked(store, label, { command: 'import --activate' });
    onProgress?.({ phase: 'activated', version: label });
  }
  await dropStaging(staging, store); // only removes S/staging when now empty
  return { version: label, status: 'imported', activated: Boolean(o.activate), ...admissionFields(staged.admission) };
}

/** Who signed and which rule was overridden: reported by stores with a trust policy; by others only when --allow-downgrade overrode a rule. */
export function admissionFields(a: Admission): Pick<ImportResult, 'signers' | 'overridden'> {
  return a.rule === 'policy' ? { signers: a.signers, overridden: a.overridden } : a.overridden.length ? { overridden: a.overridden } : {};
}

/** The audit line of an import: what was imported (path and sha256), the version, the rule that admitted it. `how` opens the detail (a delta's base). */
export function importEvent(x: {
  package: string;
  packageSha256: string | null;
  domain: string;
  version: string;
  admission: Admission;
  outcome: 'imported' | 'unchanged';
  how?: string;
}): AuditEvent {
  const a = x.admission;
  return {
    command: 'import',
    outcome: x.outcome,
    reason: a.overridden.length ? 'AIRLOCK_ALLOW_DOWNGRADE' : null,
    package: x.package,
    packageSha256: x.packageSha256,
    domain: x.domain,
    version: x.version,
    signers: a.signers,
    detail: (x.how ? `${x.how}; ` : '') + describeAdmission(a) + (a.overridden.length ? `; --allow-downgrade overrode ${a.overridden.join(', ')}` : ''),
  };
}
