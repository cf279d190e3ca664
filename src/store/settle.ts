import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { AirlockError } from '../errors.js';
import { lockedByOther } from './lock.js';
import { storePaths, trustPaths } from './paths.js';

/**
 * A reader outside the store lock (verify --store, trust show, an import's early admission) may
 * catch another command half-way through its change: an import logged but its seen order not yet
 * written, a policy change staged and logged but not yet in the chain, an audit line without its
 * head. What then looks like a damaged store is only reported once the store held still for a
 * whole read and no other live process holds the lock, waiting at most SETTLE_MS for that. Under
 * the lock nothing moves: a real break costs a few stats more.
 */

/** Refusals about the store's own records, which a change under way can show to a reader outside the lock. */
export const SETTLED_UNDER_LOCK: ReadonlySet<string> = new Set(['AIRLOCK_AUDIT_BROKEN', 'AIRLOCK_BAD_SEEN', 'AIRLOCK_POLICY_BROKEN']);

/** How long a reader outside the lock waits for a change under way to be written. */
export const SETTLE_MS = 3_000;

/** Identity, size and change time of the records a change writes: equal before and after a read means none ran meanwhile. */
export async function recordsState(store: string): Promise<string> {
  const t = trustPaths(store);
  const one = (path: string) =>
    lstat(path, { bigint: true }).then(
      (st) => `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`,
      () => 'none',
    );
  const paths = [join(storePaths(store).root, 'audit.head'), join(storePaths(store).root, 'audit.log'), t.policy, t.staged, t.chain, t.seen];
  return (await Promise.all(paths.map(one))).join('|');
}

/** `read`, again while it refuses with one of `codes` and the store changed during the read or another live process holds the lock (at most SETTLE_MS). */
export async function settled<T>(store: string, read: () => Promise<T>, codes: ReadonlySet<string> = SETTLED_UNDER_LOCK): Promise<T> {
  const due = Date.now() + SETTLE_MS;
  for (;;) {
    const before = await recordsState(store);
    try {
      return await read();
    } catch (err) {
      if (!(err instanceof AirlockError) || !codes.has(err.code) || Date.now() >= due) throw err;
      if ((await recordsState(store)) === before && !(await lockedByOther(store))) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
