import { lstat, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { UsageError, outputExists } from '../errors.js';
import { storeHolding } from '../store/holder.js';
import { atomicWriteFile, describeFsError, kindOf } from '../util/fsx.js';
import { outFolderProblem } from '../util/out-folder.js';

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
  /** The command has a --force flag (said in the refusal of an existing file). */
  hasForce?: boolean;
  /** The store, whose files are never an output. */
  store?: string;
}

const refuse = (path: string, why: string) => new UsageError(`${path} ${why}`, { subject: path }, 'AIRLOCK_OUT_PATH');

/** Refuse an output path inside a store (exit 2, AIRLOCK_OUT_PATH): writing there would damage it. */
export async function refuseInStore(path: string, flag: string, what: 'file' | 'folder', store?: string): Promise<void> {
  const holder = await storeHolding(path, store);
  if (holder !== null) throw refuse(path, `is inside the store ${holder}; ${flag} must name a ${what} outside it (writing there would damage the store)`);
}

/** Check `path` as an output file under `rule`: throws the refusal (exit 2, AIRLOCK_OUT_PATH) naming it. */
export async function checkOutFile(path: string, rule: OutFileRule): Promise<void> {
  await refuseInStore(path, rule.flag, 'file', rule.store);
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
  if (!st.isFile())
    throw refuse(path, `is ${kindOf(st)}, not a regular file; ${rule.flag} must name a new file${rule.force ? ' or a regular file to replace' : ''}`);
  if (!rule.force) throw outputExists(path, `${rule.hasForce ? 'pass --force to replace it, or ' : ''}choose another ${rule.flag}`);
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
 * An output FOLDER a user names (`delta`, `pack`, `fetch --out DIR`): missing (created later) or a
 * folder outside any store; a file, a device or a FIFO there is refused in words (exit 2, naming
 * it), never a raw EEXIST or ENOTDIR.
 */
export async function checkOutFolder(dir: string, flag: string): Promise<void> {
  await refuseInStore(dir, flag, 'folder');
  const why = await outFolderProblem(dir);
  if (why !== null)
    throw new UsageError(`output folder ${dir} ${why}; ${flag} must name a folder that exists or can be made`, { subject: dir }, 'AIRLOCK_OUT_PATH');
}
