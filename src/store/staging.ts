import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { EXIT, StoreError } from '../errors.js';
import type { Manifest } from '../package/index.js';
import { describeFsError, fsyncDir } from '../util/fsx.js';
import { packageOrder, recordSeen } from './admit.js';
import { appendAuditLocked, auditNotApplied } from './audit/append.js';
import type { AuditEvent, AuditLine } from './audit/files.js';
import { importDetail } from './audit/learn.js';
import { checkStoreFolder } from './location.js';
import type { StoreLock } from './lock.js';
import { storePaths, versionDir } from './paths.js';

/**
 * Under the store lock nothing in S/staging is in progress, so everything there is what a
 * crashed or killed import (or prune) left behind: remove it (the store guarantees: all or nothing, durable).
 */
export async function cleanStaging(store: string): Promise<string[]> {
  const dir = storePaths(store).staging;
  // Only the store's own folder is emptied: a file there is damage, and a symlink would have the
  // clean-up remove whatever it points to. Both are refused, in words, before anything changes.
  if (!(await checkStoreFolder(store, dir))) return [];
  const names = await readdir(dir);
  for (const name of names) await rm(join(dir, name), { recursive: true, force: true });
  await rmdir(dir).catch(() => {}); // recreated on demand; an empty one is noise in the store
  return names;
}

/** A fresh, private work folder inside the store (same file system, so the commit is a rename). */
export async function makeStaging(store: string): Promise<string> {
  const dir = join(storePaths(store).staging, randomBytes(8).toString('hex'));
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Remove a work folder, and S/staging itself when empty, so a refused import leaves no trace. */
export async function dropStaging(dir: string, store: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await rmdir(storePaths(store).staging).catch(() => {});
}

export interface StagedCommit {
  store: string;
  /** The complete, fsynced version built by makeStaging's caller. */
  staging: string;
  label: string;
  lock: StoreLock;
  signal?: AbortSignal;
  /** The `imported` line. */
  audit: AuditEvent;
  /** The manifest whose sequence trust/seen.json records once the version is in. */
  seen: Pick<Manifest, 'domain' | 'version' | 'sequence' | 'createdAt'>;
}

/**
 * Publish a staged version: the one commit step of every import (full, volumes, delta). The order
 * is what keeps "all or nothing" with the audit log:
 *   1. the lock is still ours and no signal came;
 *   2. the audit line is appended (the whole chain verified first): a broken or unwritable log
 *      refuses here (exit 4) and nothing is visible: no version, no seen.json advance;
 *   3. one rename makes the version visible (the commit); if it fails, a `failed` line names the
 *      line of step 2;
 *   4. the folders are fsynced and trust/seen.json advanced; if that fails the version is moved
 *      back out (so the store never holds a version whose sequence was not recorded) and a
 *      `failed` line says so.
 * On any throw the caller removes `staging` (dropStaging); S/versions is removed again if this
 * made it and it is empty. A crash between 2 and 3 leaves an `imported` line for a version the
 * store does not hold (list shows it); never a version without its line.
 */
export async function commitStaged(c: StagedCommit): Promise<void> {
  const { store, staging, label, lock, signal } = c;
  const { versions, staging: stagingRoot } = storePaths(store);
  const finalDir = versionDir(store, label);
  signal?.throwIfAborted();
  await lock.assertHeld();
  const madeVersions = await mkdir(versions).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') return false;
      throw err;
    },
  );
  const unmake = async () => {
    if (madeVersions) await rmdir(versions).catch(() => {}); // only if still empty
  };
  let line: AuditLine;
  try {
    // The line carries the sequence seen.json is about to record: the log then remembers it, and
    // an older seen record put back is refused (checkFreshness) rather than trusted.
    line = await appendAuditLocked(store, { ...c.audit, detail: importDetail(packageOrder(c.seen), c.audit.detail) });
    await rename(staging, finalDir).catch(async (err: NodeJS.ErrnoException) => {
      await auditNotApplied(store, line, err);
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      throw new StoreError(
        'AIRLOCK_BAD_VERSION',
        `${finalDir} exists but holds no complete version (no version.json); remove it and import again`,
        { subject: finalDir },
        EXIT.USAGE,
      );
    });
  } catch (err) {
    await unmake();
    throw err;
  }
  try {
    await fsyncDir(versions);
    await fsyncDir(stagingRoot);
    if (madeVersions) await fsyncDir(store);
    await recordSeen(store, c.seen);
  } catch (err) {
    // Moved back out and that move made durable, or the user is told the store still holds it:
    // after a crash it would be listed as imported while seen.json and the log say it was not.
    const undo = await rename(finalDir, staging)
      .then(() => fsyncDir(versions))
      .then(
        () => null,
        (e: unknown) => e,
      );
    await auditNotApplied(store, line, err);
    await unmake();
    if (undo !== null) {
      throw new StoreError(
        'AIRLOCK_BAD_VERSION',
        `${err instanceof Error ? err.message : String(err)}; and taking ${finalDir} back out of the store failed (${describeFsError(undo)}): remove it by hand before importing again`,
        { subject: finalDir },
      );
    }
    throw err;
  }
}
