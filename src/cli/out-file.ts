import { lstat, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { UsageError } from '../errors.js';
import { atomicWriteFile, describeFsError } from '../util/fsx.js';

/**
 * An output FILE a user names (`receipt --out FILE`): only a new regular file, or with `force` an
 * existing regular file, is ever written, atomically (temp file, fsync, rename). A device, a FIFO,
 * a folder or a symbolic link there is refused, never replaced; nothing inside the store is ever
 * written, even with `force` (a receipt over a version.json breaks the store). Exit 2, naming it.
 */
export interface OutFileRule {
  /** The flag that named the path, for messages ("--out"). */
  flag: string;
  /** Replace an existing regular file (outside the store). */
  force: boolean;
  /** The store, whose files are never an output. */
  store?: string;
}

const refuse = (path: string, why: string) => new UsageError(`${path} ${why}`, { subject: path }, 'AIRLOCK_OUT_PATH');

function kindOf(st: Awaited<ReturnType<typeof lstat>>): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return st.isFile() ? 'a regular file' : 'of an unknown kind';
}

/** The real path of `path` (its folder resolved, so a symlinked folder cannot hide the store). */
async function realOf(path: string): Promise<string | null> {
  const dir = await realpath(dirname(path)).catch(() => null);
  return dir === null ? null : join(dir, basename(path));
}

/** Check `path` as an output file under `rule`: throws the refusal (exit 2, AIRLOCK_OUT_PATH) naming it. */
export async function checkOutFile(path: string, rule: OutFileRule): Promise<void> {
  if (rule.store !== undefined) {
    const store = await realpath(rule.store).catch(() => rule.store!);
    const real = (await realOf(path)) ?? path;
    const rel = relative(store, real);
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) {
      throw refuse(path, `is inside the store ${rule.store}; ${rule.flag} must name a file outside it (writing there would damage the store)`);
    }
  }
  let st;
  try {
    st = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw refuse(path, describeFsError(err));
    const parent = dirname(path);
    const p = await stat(parent).catch((e: unknown) => e as NodeJS.ErrnoException);
    if (!('isDirectory' in p)) throw refuse(path, `cannot be written: its folder ${parent} ${describeFsError(p)}`);
    if (!p.isDirectory()) throw refuse(path, `cannot be written: ${parent} is not a folder`);
    return;
  }
  if (!st.isFile()) throw refuse(path, `is ${kindOf(st)}, not a regular file; ${rule.flag} must name a new file${rule.force ? ' or a regular file to replace' : ''}`);
  if (!rule.force) throw refuse(path, `already exists; pass --force to replace it, or choose another ${rule.flag}`);
}

/** Write `data` to the output file `path` after checkOutFile; a write error is said in words (exit 2), never a raw errno. */
export async function writeOutFile(path: string, data: string | Uint8Array, rule: OutFileRule): Promise<void> {
  await checkOutFile(path, rule);
  await atomicWriteFile(path, data).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || typeof code !== 'string') throw err;
    throw refuse(path, describeFsError(err).replace(/^cannot be read/, 'cannot be written'));
  });
}

/**
 * An output FOLDER a user names (`delta --out DIR`): missing (created later) or a folder; a file,
 * a device or a FIFO there is refused in words (exit 2, naming it), never a raw EEXIST or ENOTDIR.
 */
export async function checkOutFolder(dir: string, flag: string): Promise<void> {
  const st = await stat(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw refuse(dir, describeFsError(err));
  });
  if (st && !st.isDirectory()) throw refuse(dir, `is ${kindOf(st)}, not a folder; ${flag} must name a folder`);
}
