import { lstat } from 'node:fs/promises';
import { StoreError } from '../errors.js';
import { versionDir, versionPaths } from './paths.js';
import { withLock, type LockOptions } from './lock.js';
import { readMeta, readStoredManifest } from './meta.js';
import { readState, writeState } from './state.js';
import { appendAuditLocked, auditNotApplied } from './audit/append.js';
import { checkVersionsFolder, describeHoldings, storedLabels } from './holdings.js';

export async function versionExists(store: string, label: string): Promise<boolean> {
  // The store's own folders only (a link into another store is refused, never followed); then
  // version.json, written before the commit rename: its presence means a complete version. A
  // link there, even dangling, is present: reading it refuses it by name (readMeta).
  if (!(await checkVersionsFolder(store))) return false;
  return lstat(versionPaths(versionDir(store, label)).meta).then(
    () => true,
    () => false,
  );
}

/** A version that must be there; else AIRLOCK_VERSION_NOT_FOUND listing the versions the store holds. */
export async function requireVersion(store: string, label: string): Promise<void> {
  if (!(await versionExists(store, label))) {
    const held = describeHoldings(store, await storedLabels(store));
    throw new StoreError('AIRLOCK_VERSION_NOT_FOUND', `version ${JSON.stringify(label)} is not in store ${store}${held.empty ? ': ' : '; '}${held.text}`, {
      subject: label,
    });
  }
}

/**
 * Point `active` at `label` (caller holds the lock). Re-activating the active one changes nothing.
 * A version whose version.json is damaged is refused (exit 2) rather than made active.
 */
export async function activateLocked(store: string, label: string, audit: { command: string }): Promise<void> {
  await requireVersion(store, label);
  await readMeta(versionDir(store, label));
  const state = await readState(store);
  if (state.active === label) return;
  await switchAudited(store, { active: label, previous: state.active }, audit.command, 'activated', label, `was ${state.active ?? '(none)'}`);
}

/** `airlock activate V`: atomic and durable (the store guarantees: all or nothing, durable). */
export async function activate(store: string, label: string, o?: LockOptions): Promise<void> {
  await withLock(
    store,
    async () => {
      await activateLocked(store, label, { command: 'activate' });
    },
    o,
  );
}

/**
 * Write the new state, audited (caller holds the lock). The order is what makes a refusal change
 * nothing and a change never go unrecorded:
 *   1. append the line (appendAuditLocked verifies the whole chain first: a broken log is refused,
 *      exit 4, before anything is written, and state.json stays as it was);
 *   2. write state.json (temp file + fsync + rename + fsync of the store folder: durable once it
 *      returns, and readers see the old state or the new, never a mix);
 *   3. if that write fails, a `failed` line names the line of step 1 (auditNotApplied).
 * A crash between 1 and 2 leaves a line for a switch that did not happen (state.json shows it);
 * never a switch without its line.
 */
async function switchAudited(
  store: string,
  next: { active: string; previous: string | null },
  command: string,
  outcome: string,
  label: string,
  detail: string,
): Promise<void> {
  // Its metadata and its manifest read and parse: a damaged version is refused, never made active.
  const meta = await readMeta(versionDir(store, label));
  await readStoredManifest(versionDir(store, label));
  const line = await appendAuditLocked(store, {
    command,
    outcome,
    packageSha256: meta.packageSha256,
    domain: meta.domain,
    version: label,
    signers: Array.isArray(meta.signers) ? (meta.signers as string[]) : meta.signer ? [meta.signer] : [],
    detail,
  });
  try {
    await writeState(store, next);
  } catch (err) {
    await auditNotApplied(store, line, err);
    throw err;
  }
}

/** `airlock rollback`: swap active and previous; returns the label now active. */
export async function rollback(store: string, o?: LockOptions): Promise<string> {
  return withLock(
    store,
    async () => {
      const state = await readState(store);
      if (!state.previous) throw new StoreError('AIRLOCK_NO_PREVIOUS', `store ${store} has no previously active version to roll back to`, { subject: store });
      await requireVersion(store, state.previous);
      await switchAudited(
        store,
        { active: state.previous, previous: state.active },
        'rollback',
        'rolled-back',
        state.previous,
        `was ${state.active ?? '(none)'}`,
      );
      return state.previous;
    },
    o,
  );
}
