import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { EXIT, StoreError } from '../errors.js';
import { fsyncDir } from '../util/fsx.js';
import { readLeases, removeDeadLeases, type LeaseRecord } from './leases.js';
import { listVersions } from './list.js';
import { withLock, type LockOptions } from './lock.js';
import { storePaths, versionDir } from './paths.js';
import { readState, type StoreState } from './state.js';
import { appendAuditLocked, auditNotApplied } from './audit/append.js';
import { auditWritable } from './audit/chain.js';

/** Why prune kept a version (several may hold at once). */
export type KeepReason = { why: 'newest'; keep: number } | { why: 'active' } | { why: 'previous' } | { why: 'leased'; pids: number[] };
export interface PruneEntry {
  version: string;
  deleted: boolean;
  reasons: KeepReason[];
}
export interface PruneReport {
  keep: number;
  versions: PruneEntry[];
  deleted: string[];
}

/**
 * What `prune --keep N` does to each version, newest import first (pure): all but the N most
 * recently imported go, never a protected one. Protected: the active version, the
 * previous one (so `rollback` always has somewhere to go) and any version leased by a live
 * server (never pull a version from under a server).
 */
export function planPrune(
  newestFirst: readonly string[],
  keep: number,
  state: Pick<StoreState, 'active' | 'previous'>,
  leases: readonly Pick<LeaseRecord, 'pid' | 'version'>[],
): PruneEntry[] {
  return newestFirst.map((version, i) => {
    const reasons: KeepReason[] = [];
    if (i < keep) reasons.push({ why: 'newest', keep });
    if (state.active === version) reasons.push({ why: 'active' });
    if (state.previous === version) reasons.push({ why: 'previous' });
    const pids = leases.filter((l) => l.version === version).map((l) => l.pid);
    if (pids.length) reasons.push({ why: 'leased', pids });
    return { version, deleted: reasons.length === 0, reasons };
  });
}

/** `airlock prune --keep N`: what was deleted and, for each version kept, why. */
export async function pruneReport(store: string, keep: number, o?: LockOptions): Promise<PruneReport> {
  return withLock(
    store,
    async () => {
      await auditWritable(store); // a broken audit log refuses the prune before anything changes (dead leases included)
      const state = await readState(store);
      const versions = await listVersions(store);
      const leases = await readLeases(store, (dead, unreadable) => removeDeadLeases(store, dead, unreadable)); // dead servers' leases go
      const labels = versions.map((v) => v.version);
      // Fail closed before deleting anything: pointers to versions that are not there mean a
      // damaged or hand-edited state.json, and "active" may then not be what is really served.
      for (const p of [state.active, state.previous]) {
        if (p !== null && !labels.includes(p)) {
          throw new StoreError(
            'AIRLOCK_BAD_STATE',
            `store state ${storePaths(store).state} names version ${p}, which is not in the store; nothing was deleted (make a version active with airlock activate V first)`,
            { subject: storePaths(store).state },
            EXIT.USAGE,
          );
        }
      }
      const plan = planPrune(labels, keep, state, leases);
      const { staging, versions: versionsDir } = storePaths(store);
      const doomed = plan.filter((e) => e.deleted);
      // Recorded in every store's audit log BEFORE any version goes (trust/seen.json keeps the
      // sequences): the append verifies the chain first, so a broken log refuses the prune (exit 4)
      // with nothing deleted. A version a server leases meanwhile is put back and a `kept` line
      // says so; a failure part way gets a `failed` line naming what went and what did not.
      const line = doomed.length
        ? await appendAuditLocked(store, { command: 'prune', outcome: 'pruned', detail: `keep ${keep}; deleted ${doomed.map((e) => e.version).join(', ')}` })
        : null;
      const gone: string[] = [];
      try {
        for (const entry of doomed) {
          // A stop asked for (the command's signal) ends the prune between two versions: each one is
          // wholly there or wholly gone, and the `failed` line below says which.
          if (o?.signal?.aborted) {
            const left = doomed.map((e) => e.version).filter((v) => !gone.includes(v));
            throw new StoreError('AIRLOCK_INTERRUPTED', `prune stopped: deleted ${gone.join(', ') || 'none'}; still in the store: ${left.join(', ')}`, {
              subject: store,
            });
          }
          // Move out first (one atomic rename), so nobody ever sees a half-deleted version; then
          // look at the leases again: a server that leased it meanwhile gets it back at once.
          await mkdir(staging, { recursive: true });
          const aside = join(staging, `prune-${randomBytes(6).toString('hex')}`);
          await rename(versionDir(store, entry.version), aside);
          const late = (await readLeases(store)).filter((l) => l.version === entry.version);
          if (late.length) {
            await rename(aside, versionDir(store, entry.version));
            Object.assign(entry, { deleted: false, reasons: [{ why: 'leased', pids: late.map((l) => l.pid) }] });
            continue;
          }
          gone.push(entry.version);
          await fsyncDir(versionsDir);
          await rm(aside, { recursive: true, force: true });
        }
      } catch (err) {
        if (line)
          await auditNotApplied(
            store,
            line,
            err,
            `${doomed
              .map((e) => e.version)
              .filter((v) => !gone.includes(v))
              .join(', ')} (deleted: ${gone.join(', ') || 'none'})`,
          );
        throw err;
      } finally {
        await rmdir(staging).catch(() => {}); // only when empty
      }
      const deleted = plan.filter((e) => e.deleted).map((e) => e.version);
      const kept = doomed.filter((e) => !e.deleted).map((e) => e.version);
      if (line && kept.length) {
        await appendAuditLocked(store, {
          command: 'prune',
          outcome: 'kept',
          reason: 'AIRLOCK_LEASED',
          detail: `line ${line.n}: kept ${kept.join(', ')} (leased by a server while pruning); deleted ${deleted.join(', ') || 'none'}`,
        });
      }
      return { keep, versions: plan, deleted };
    },
    o,
  );
}

/** `prune` returning only the labels deleted. */
export async function prune(store: string, keep: number, o?: LockOptions): Promise<string[]> {
  return (await pruneReport(store, keep, o)).deleted;
}
