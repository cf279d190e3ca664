import { access, link, open, rename, rm, rmdir, mkdir, mkdtemp, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, unlinkSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { UsageError, outputExists } from '../errors.js';
import { describeFsError } from './fs-words.js';
import { outFolderProblem } from './out-folder.js';
import { escapeControls } from './terminal.js';

export { describeFsError, faultOf, kindOf, type FileFault } from './fs-words.js';
export * from './regular-file.js';

/** fsync a file or a folder: open it read-only, sync, close. */
async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** fsync a directory so that a rename or create inside it survives a crash (POSIX rename(2) durability). */
export const fsyncDir: (dir: string) => Promise<void> = fsyncPath;

/** fsync one file (its data and size) so a later rename cannot expose it empty after a crash. */
export const fsyncFile: (path: string) => Promise<void> = fsyncPath;

/**
 * Make everything written so far on the file system that holds `path` durable, in one flush:
 * syncfs(2), through `sync -f` (GNU coreutils, busybox) since Node has no binding for it. A
 * tree of thousands of new files costs one device flush this way instead of one per file (on
 * this project's VM class an import of 2,916 files spent about half its time in per-file fsync).
 * The whole file system is flushed, other writers' data included: on a store that shares its
 * disk with a busy writer this waits for that writer's dirty pages too.
 * Returns false when it cannot be done here (not Linux, no `sync -f`, or it failed): the
 * caller must then fsync each file itself, which also reports a write-back error with its errno.
 */
export function syncFileSystem(path: string): Promise<boolean> {
  if (process.platform !== 'linux') return Promise.resolve(false);
  const program = SYNC_PROGRAMS.find((p) => existsSync(p));
  if (program === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    execFile(program, ['-f', path], { timeout: SYNC_TIMEOUT_MS, env: {} }, (err) => resolve(!err));
  });
}

/**
 * Only the system's own `sync`, never one found on PATH: a program placed first on PATH would
 * otherwise run inside every import (and could stall it). A flush that takes longer than the
 * bound is left to the per-file fsync fallback.
 */
const SYNC_PROGRAMS = ['/usr/bin/sync', '/bin/sync'];
const SYNC_TIMEOUT_MS = 10 * 60_000;

/** A sibling temp name in the same folder, so that the final rename is atomic (same file system). */
export function tempSibling(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

export interface DurableWrite {
  mode?: number;
  /** Never replace a file at the path, even one that appeared while this wrote (AIRLOCK_EXISTS, exit 2). */
  exclusive?: boolean;
  /** Reads the finished, synced temp file before it gets its name (a signer re-reads what it wrote). */
  check?: (tmp: string) => Promise<void>;
  /**
   * false: the folder is not synced here; the caller syncs it once after many files and before
   * anything names them (precompressed variants). Its own sync error then surfaces there.
   */
  syncFolder?: boolean;
  /**
   * A stop asked for (a command's signal trap): checked once the file is complete and synced,
   * before it gets its name. Aborted by then, the write is dropped (the temp file removed, the path
   * as it was); past that point the write finishes. The last moment a stop changes nothing.
   */
  signal?: AbortSignal;
}

/**
 * The one way a durable file is written: a temp sibling created exclusively, filled by `fill`
 * through its handle, synced, optionally checked, then given its name by one rename (or, when
 * `exclusive`, by publishNew), and the folder synced. Readers see the old file or the complete new
 * one, never a mix; a crash leaves at most a temp file. Any error, a sync error included, removes
 * the temp file and leaves the path as it was.
 */
export async function writeDurably<T>(path: string, fill: (fh: FileHandle) => Promise<T>, o: DurableWrite = {}): Promise<T> {
  const tmp = tempSibling(path);
  const fh = await open(tmp, 'wx', o.mode ?? 0o644);
  unfinished.add(tmp);
  try {
    return await fillAndName(tmp, fh, path, fill, o);
  } finally {
    unfinished.delete(tmp);
  }
}

/**
 * Temp files of writes still under way. A process that ends before they finish (a signal before
 * the command took over its own clean-up exits at once) removes them on its way out: a package
 * being signed on a USB stick must not leave a hidden copy of itself there.
 */
const unfinished = new Set<string>();
process.on('exit', () => {
  for (const tmp of unfinished) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
  }
});

async function fillAndName<T>(tmp: string, fh: FileHandle, path: string, fill: (fh: FileHandle) => Promise<T>, o: DurableWrite): Promise<T> {
  let result: T;
  try {
    result = await fill(fh);
    await fh.sync();
    o.signal?.throwIfAborted();
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  try {
    await fh.close();
    await o.check?.(tmp);
    o.signal?.throwIfAborted();
    await (o.exclusive ? publishNew(tmp, path) : rename(tmp, path));
  } finally {
    await rm(tmp, { force: true }); // gone after a rename; the spare name after a link
  }
  if (o.syncFolder !== false) await fsyncDir(dirname(path));
  return result;
}

/**
 * Give a finished temp file its final name without ever replacing a file that appeared there
 * meanwhile: link(2) fails with EEXIST where rename(2) would silently overwrite. File systems
 * without hard links (FAT/exFAT USB sticks) fall back to a check and a rename.
 */
export async function publishNew(tmp: string, outPath: string): Promise<void> {
  try {
    await link(tmp, outPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw outputExists(outPath);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
    if (
      await access(outPath).then(
        () => true,
        () => false,
      )
    )
      throw outputExists(outPath);
    await rename(tmp, outPath);
  }
}

/**
 * Write a whole file so that readers see either the old content or the new, never a mix
 * (writeDurably), creating its folder when missing.
 */
export async function atomicWriteFile(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeDurably(path, (fh) => fh.writeFile(data), { mode });
}

/**
 * A fresh private folder under the system's temporary folder (TMPDIR, else /tmp). A TMPDIR that is
 * missing, a file or a FIFO is the user's setting: exit 2 AIRLOCK_TMPDIR naming it, in words.
 */
export async function makeTempFolder(prefix: string): Promise<string> {
  const dir = tmpdir();
  return mkdtemp(join(dir, prefix)).catch(async (err: NodeJS.ErrnoException) => {
    const code = typeof err?.code === 'string' ? err.code : undefined;
    // A dangling link or a file as TMPDIR is named for what it is, not as a folder that "does not exist".
    const why = (await outFolderProblem(dir)) ?? (code === 'ENOENT' ? 'does not exist' : describeFsError(err, 'write'));
    throw new UsageError(
      `cannot make a temporary folder in TMPDIR ${escapeControls(dir)}: ${why}; set TMPDIR to a writable folder (or unset it for /tmp)`,
      { subject: 'TMPDIR', ...(code ? { errno: code } : {}) },
      'AIRLOCK_TMPDIR',
    );
  });
}

/** Remove `dir` and its parents up to `top` (the first folder this run created: what `mkdir(dir, { recursive: true })` returned), each only when empty. */
export async function removeEmptyUpTo(dir: string, top: string): Promise<void> {
  for (let d = dir; d.startsWith(top); d = dirname(d)) {
    if (
      !(await rmdir(d).then(
        () => true,
        () => false,
      )) ||
      d === top
    )
      return;
  }
}

/**
 * `dir` and the `up` folders above it are folders of their own, not symbolic links (lstat: a link
 * is never followed). Checked before airlock writes into a store's derived folders (prepared pages,
 * search indexes), so nothing goes through a link swapped in while it runs. Throws in words.
 */
export function refuseLinkedFolders(dir: string, up: number): void {
  for (let d = dir, i = 0; i <= up; i++, d = dirname(d)) {
    const st = lstatSync(d);
    if (st.isSymbolicLink() || !st.isDirectory())
      throw new Error(`${escapeControls(d)} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a folder'}, which airlock never writes through`);
  }
}
