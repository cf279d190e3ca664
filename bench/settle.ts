import { spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';

/**
 * Deleting thousands of files just before a timed run slows down whatever creates files next:
 * ext4 without a journal (this VM's root file system) skips inodes deleted in the last 60 s when
 * it allocates new ones (recently_deleted(), 300 s while the inode table is dirty), so every file
 * the timed command creates scans past the ones removed a second earlier. A system-wide profile
 * of such a delta import had a third of its samples in recently_deleted() and 18 % spinning on a
 * lock its callers held; sys time of the same command ranged from 0.6 s to 4 s. Cold runs largely
 * escape it (the check is skipped for an inode table block not in memory). So benchmarks delete
 * between cases, never between timed runs, sync, and let the next timed run wait (settle()) until
 * a minute has passed. A user's import does not follow a mass delete by seconds.
 */
let deletedAt = -Infinity;

/** Remove `paths`, sync, and remember when: the next settle() waits for them to age. */
export async function remove(...paths: string[]): Promise<void> {
  for (const p of paths) await rm(p, { recursive: true, force: true });
  spawnSync('sync');
  deletedAt = performance.now();
}

/** Wait until 61 s have passed since the last remove() (no wait if none). */
export async function settle(): Promise<void> {
  const wait = deletedAt + 61_000 - performance.now();
  if (wait <= 0) return;
  process.stderr.write(`waiting ${Math.ceil(wait / 1000)} s for the files just deleted to age (bench/settle.ts)...\n`);
  await new Promise((r) => setTimeout(r, wait));
}
