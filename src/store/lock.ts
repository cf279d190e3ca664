import { link, lstat, stat, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { EXIT, StoreError } from '../errors.js';
import { readRegularFileIfExists, tempSibling } from '../util/fsx.js';
import { requireStore, storePathError } from './location.js';
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
export interface LockOptions {
  timeoutMs?: number;
  onWait?: (holderPid: number) => void;
  signal?: AbortSignal;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * A lock file holds ~150 bytes; a damaged one (up to this bound) is taken over like any lock of a
 * dead holder. Anything but a regular file there (a FIFO, a device, a folder), or a file past the
 * bound, is refused naming it, never waited on or read forever.
 */
const LOCK_BYTES = 1024 * 1024;
const readLockFile = async (path: string): Promise<string | null> => {
  const bytes = await readRegularFileIfExists(path, {
    maxBytes: LOCK_BYTES,
    refuse: (why) =>
      new StoreError('AIRLOCK_STORE_PATH', `store lock ${path} ${why}; no airlock process writes such a lock: remove it`, { subject: path }, EXIT.USAGE),
  });
  return bytes === null ? null : bytes.toString('utf8');
};
const readOwner = async (path: string): Promise<{ raw: string; owner: Owner | null } | null> => {
  const raw = await readLockFile(path);
  if (raw === null) return null;
  const parsed = OwnerSchema.safeParse(
    (() => {
      try {
        return JSON.parse(raw);
      } catch {
        return null;
      }
    })(),
  );
  return { raw, owner: parsed.success ? parsed.data : null };
};

/** A reaper holds S/lock.reap for microseconds; one older than this was left by a killed reaper. */
const REAP_STALE_MS = 10_000;

/**
 * Remove a lock whose holder is dead, but only that lock. Deleting by path is not atomic with
 * the check that judged it dead (a newer live lock may have replaced it meanwhile, and another
 * taker may just have removed it), so removals are serialised by S/lock.reap (O_EXCL): while
 * holding it, S/lock can change only by a reaper (us) or its owner (dead), so "read, compare
 * with what we judged dead, unlink" is safe. Afterwards everyone contends again through link(2).
 */
async function takeOver(lockPath: string, observed: string): Promise<void> {
  const reap = `${lockPath}.reap`;
  try {
    await writeFile(reap, JSON.stringify(self), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const age = await stat(reap).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > REAP_STALE_MS) await unlink(reap).catch(() => {});
    await sleep(5);
    return;
  }
  try {
    const now = await readLockFile(lockPath).catch(() => null);
    if (now === observed) await unlink(lockPath);
  } finally {
    await unlink(reap).catch(() => {});
  }
}

/**
 * Take the store lock (docs/design.md: S/lock with pid + process start marker). The file is
 * written complete under a temp name and published with link(2), which fails if S/lock exists:
 * nobody ever sees a half-written lock. Waits at most `timeoutMs` for a live holder.
 */
/** Whether another live process holds the store lock now (a reader outside the lock asks; any doubt is no). */
export async function lockedByOther(store: string): Promise<boolean> {
  const held = await readOwner(storePaths(store).lock).catch(() => null);
  return Boolean(held?.owner && held.owner.pid !== self.pid && isAlive(held.owner.pid, held.owner.start));
}

export async function acquireLock(store: string, o: LockOptions = {}): Promise<StoreLock> {
  const lockPath = storePaths(store).lock;
  await requireStore(store); // a lock never creates a store (only import does, before locking)
  const owner: Owner = { ...self, nonce: randomBytes(12).toString('hex'), since: new Date().toISOString() };
  const tmp = tempSibling(lockPath);
  try {
    await writeFile(tmp, JSON.stringify(owner), { flag: 'wx' });
  } catch (err) {
    throw storePathError(store, err, `write its lock ${lockPath}`) ?? err;
  }
  const deadline = Date.now() + (o.timeoutMs ?? 120_000);
  let warned = false;
  try {
    for (let delay = 20; ; delay = Math.min(delay * 2, 100)) {
      o.signal?.throwIfAborted();
      try {
        await link(tmp, lockPath);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw storePathError(store, err, `take its lock ${lockPath}`) ?? err;
      }
      const held = await readOwner(lockPath);
      if (!held) {
        // Released between our link and read: try again at once. Unless the name is there but
        // reads as missing: a dangling symbolic link, which no airlock process writes.
        const st = await lstat(lockPath).catch(() => null);
        if (st?.isSymbolicLink())
          throw new StoreError(
            'AIRLOCK_STORE_PATH',
            `store lock ${lockPath} is a symbolic link to nothing; no airlock process writes such a lock: remove it`,
            { subject: lockPath },
            EXIT.USAGE,
          );
        continue;
      }
      if (!held.owner || !isAlive(held.owner.pid, held.owner.start)) {
        await takeOver(lockPath, held.raw);
        continue;
      }
      if (Date.now() >= deadline) {
        throw new StoreError(
          'AIRLOCK_STORE_LOCKED',
          `store ${store} is locked by running process ${held.owner.pid} (since ${held.owner.since}); try again when it finishes`,
          { subject: lockPath, pid: held.owner.pid },
        );
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
