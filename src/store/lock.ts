import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { StoreError } from '../errors.js';
import { tempSibling } from '../util/fsx.js';
import { storePaths } from './paths.js';
import { isAlive, self } from './proc.js';

const OwnerSchema = z.object({ pid: z.number().int(), start: z.string(), nonce: z.string(), since: z.string() });
type Owner = z.infer<typeof OwnerSchema>;

export interface StoreLock {
  readonly owner: Owner;
  /** Throws if another process has taken the lock (only possible if we were judged dead). */
  assertHeld(): Promise<void>;
  release(): Promise<void>;
}
export interface LockOptions { timeoutMs?: number; onWait?: (holderPid: number) => void }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const readOwner = async (path: string): Promise<{ raw: string; owner: Owner | null } | null> => {
  try {
    const raw = await readFile(path, 'utf8');
    const parsed = OwnerSchema.safeParse((() => { try { return JSON.parse(raw); } catch { return null; } })());
    return { raw, owner: parsed.success ? parsed.data : null };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
};

/**
 * Remove a lock whose holder is dead, but only that lock. rename(2) is atomic, so of several
 * takers only one moves a given lock file; the mover then checks it moved the very file it judged
 * dead (a newer live lock may have replaced it meanwhile) and puts a live one back with link(2),
 * which never overwrites. Afterwards everyone contends again through link(2) (O_EXCL semantics).
 */
async function takeOver(lockPath: string, observed: string): Promise<void> {
  const aside = `${lockPath}.stale.${randomBytes(6).toString('hex')}`;
  try {
    await rename(lockPath, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // another taker moved it
    throw err;
  }
  const moved = await readFile(aside, 'utf8').catch(() => '');
  if (moved !== observed) await link(aside, lockPath).catch(() => {}); // a live lock: restore it
  await unlink(aside).catch(() => {});
}

/**
 * Take the store lock (docs/DESIGN.md: S/lock with pid + process start marker). The file is
 * written complete under a temp name and published with link(2), which fails if S/lock exists:
 * nobody ever sees a half-written lock. Waits at most `timeoutMs` for a live holder.
 */
export async function acquireLock(store: string, o: LockOptions = {}): Promise<StoreLock> {
  const lockPath = storePaths(store).lock;
  await mkdir(store, { recursive: true });
  const owner: Owner = { ...self, nonce: randomBytes(12).toString('hex'), since: new Date().toISOString() };
  const tmp = tempSibling(lockPath);
  await writeFile(tmp, JSON.stringify(owner), { flag: 'wx' });
  const deadline = Date.now() + (o.timeoutMs ?? 120_000);
  let warned = false;
  try {
    for (let delay = 20; ; delay = Math.min(delay * 2, 100)) {
      try {
        await link(tmp, lockPath);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const held = await readOwner(lockPath);
      if (!held) continue; // released between our link and read: try again at once
      if (!held.owner || !isAlive(held.owner.pid, held.owner.start)) {
        await takeOver(lockPath, held.raw);
        continue;
      }
      if (Date.now() >= deadline) {
        throw new StoreError('AIRLOCK_STORE_LOCKED', `store ${store} is locked by running process ${held.owner.pid} (since ${held.owner.since}); try again when it finishes`, { subject: lockPath, pid: held.owner.pid });
      }
      if (!warned) o.onWait?.(held.owner.pid);
      warned = true;
      await sleep(delay);
    }
  } finally {
    await unlink(tmp).catch(() => {});
  }
  return {
    owner,
    async assertHeld() {
      const now = await readOwner(lockPath);
      if (now?.owner?.nonce !== owner.nonce) {
        throw new StoreError('AIRLOCK_LOCK_LOST', `lost the store lock ${lockPath} to process ${now?.owner?.pid ?? '(none)'}`, { subject: lockPath });
      }
    },
    async release() {
      const now = await readOwner(lockPath);
      if (now?.owner?.nonce === owner.nonce) await unlink(lockPath).catch(() => {});
    },
  };
}

/** Run `fn` holding the store lock; released however `fn` ends (a kill leaves it to takeover). */
export async function withLock<T>(store: string, fn: (lock: StoreLock) => Promise<T>, o?: LockOptions): Promise<T> {
  const lock = await acquireLock(store, o);
  try {
    return await fn(lock);
  } finally {
    await lock.release();
  }
}
