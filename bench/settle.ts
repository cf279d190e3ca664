import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Deleting thousands of files just before a timed run slows down whatever creates files next:
 * ext4 without a journal (this VM's root file system) skips inodes deleted in the last 60 s when
 * it allocates new ones (recently_deleted()), and in the last 360 s while their inode table block
 * is dirty, which it is as soon as a new file is created in it. Every file the timed command
 * creates then scans past the ones removed before it. A system-wide profile of such a delta
 * import had a third of its samples in recently_deleted() and 18 % spinning on a lock its callers
 * held; sys time of the same command ranged from 0.6 s to 4 s, and GNU tar's extraction of the
 * 3,000-page site took 1.1-2.6 s instead of 0.6-0.9 s. Cold runs largely escape it (the check is
 * skipped for an inode table block not in memory).
 * So benchmarks delete nothing before their last timed run, and wait (settle()) until 6 minutes
 * have passed since the last deletion of any benchmark, recorded across processes: a benchmark
 * started right after another one's cleanup waits for it. A user's import does not follow a mass
 * delete by seconds.
 */
const MARK = join(tmpdir(), 'airlock-bench-deleted-at');
const AGE_MS = 361_000;

/** Remove `paths`, sync, and record when: the next settle(), in any process, waits for them to age. */
export async function remove(...paths: string[]): Promise<void> {
  const existed = paths.filter((p) => existsSync(p));
  for (const p of existed) await rm(p, { recursive: true, force: true });
  if (existed.length === 0) return;
  spawnSync('sync');
  writeFileSync(MARK, String(Date.now()));
}

/** Wait until 6 minutes have passed since the last remove() of any benchmark (no wait if none). */
export async function settle(): Promise<void> {
  let at = 0;
  try {
    at = Number(readFileSync(MARK, 'utf8')) || 0;
  } catch {
    /* no benchmark deleted anything yet */
  }
  const wait = Math.min(at + AGE_MS - Date.now(), AGE_MS);
  if (wait <= 0) return;
  process.stderr.write(`waiting ${Math.ceil(wait / 1000)} s for the files a benchmark deleted to age (bench/settle.ts)...\n`);
  await new Promise((r) => setTimeout(r, wait));
}
