import { lstat, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { UsageError, outputExists } from '../errors.js';
import { storePaths } from '../store/paths.js';
import { atomicWriteFile, describeFsError, kindOf } from '../util/fsx.js';

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

const exists = (p: string) => lstat(p).then(() => true, () => false);

/**
 * The store that holds `path` (itself or a folder above it, symbolic links resolved): `rule.store`
 * when given, else any folder laid out as a store (a `versions` folder beside the store's state,
 * lock, staging, keys, leases, audit log or trust folder), so an output cannot land in a store the command was not told of.
 */
async function storeHolding(path: string, store: string | undefined): Promise<string | null> {
  // The real path: its nearest existing part resolved (a symbolic link to a store's folder included).
  let tail = '';
  let real = path;
  for (let at = path; ; at = dirname(at)) {
    const r = await realpath(at).catch(() => null);
    if (r !== null) { real = tail === '' ? r : join(r, tail); break; }
    if (dirname(at) === at) break;
    tail = tail === '' ? basename(at) : join(basename(at), tail);
  }
  const inside = (root: string) => {
    const rel = relative(root, real);
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  };
  if (store !== undefined && inside(await realpath(store).catch(() => store))) return store;
  for (let dir = real; ; dir = dirname(dir)) {
    const p = storePaths(dir);
    if ((await stat(p.versions).then((st) => st.isDirectory(), () => false))
      && (await Promise.all([p.state, p.lock, p.staging, p.trustedKeys, p.leases, join(dir, 'audit.log'), join(dir, 'trust')].map(exists))).some(Boolean)) return dir;
    if (dirname(dir) === dir) return null;
  }
}

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
  if (!st.isFile()) throw refuse(path, `is ${kindOf(st)}, not a regular file; ${rule.flag} must name a new file${rule.force ? ' or a regular file to replace' : ''}`);
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
  const st = await stat(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw new UsageError(`output folder ${dir} ${describeFsError(err)}; ${flag} must name a folder that exists or can be made`, { subject: dir }, 'AIRLOCK_OUT_PATH');
  });
  if (st && !st.isDirectory()) throw new UsageError(`output folder ${dir} is ${kindOf(st)}, not a folder; ${flag} must name a folder`, { subject: dir }, 'AIRLOCK_OUT_PATH');
}
