import { lstat, mkdir, readlink, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { EXIT, StoreError } from '../errors.js';
import { kindOf, removeEmptyUpTo } from '../util/fsx.js';
import { escapeControls, quoted } from '../util/terminal.js';
import { describeFsError } from '../util/fs-words.js';

/**
 * The store folder itself: what a user gives with --store or AIRLOCK_STORE, so every way it
 * can be wrong is said in words, naming the path, with exit 2 (a configuration error), never a
 * raw EEXIST/ENOTDIR. Read-only commands require an existing store; only import creates one,
 * and only after the package passed the checks that need no disk (see import.ts).
 */
/** The errnos that are about the store path itself (others, like ENOSPC or EIO, pass through). */
const PATH_ERRNOS = new Set(['ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'ELOOP', 'ENAMETOOLONG', 'ENOENT']);

/**
 * An errno on a store path in words (exit 2; the tool's one errno table, the code only as a
 * field of the JSON error), or null when it is not about the path (ENOSPC, EIO).
 */
export function storePathError(store: string, err: unknown, doing: string): StoreError | null {
  const e = err as NodeJS.ErrnoException;
  if (typeof e?.code !== 'string' || !PATH_ERRNOS.has(e.code)) return null;
  // ENOENT here is a folder that exists but refuses new entries (e.g. under /proc): the parents were made first.
  const why = e.code === 'ENOENT' ? 'the file system refuses to create it' : describeFsError(e, 'write');
  const at = e.path && e.path !== store && !doing.includes(e.path) ? ` (at ${escapeControls(e.path)})` : '';
  return new StoreError('AIRLOCK_STORE_PATH', `store ${store}: cannot ${doing}: ${why}${at}`, { subject: e.path ?? store, errno: e.code }, EXIT.USAGE);
}

function notAFolder(store: string, path: string, kind: string): StoreError {
  const what = path === store ? `store ${store} is` : `store ${store}: ${path} is`;
  return new StoreError(
    'AIRLOCK_STORE_PATH',
    `${what} ${kind}, not a folder; pass --store DIR (or set AIRLOCK_STORE) naming a folder`,
    { subject: path },
    EXIT.USAGE,
  );
}

/** 'dir' or 'missing'; anything else at the path (a file, a path through a file, no access) throws. */
export async function storeKind(store: string, path = store): Promise<'dir' | 'missing'> {
  let st: Stats;
  try {
    st = await stat(path);
    if (st.isDirectory()) return 'dir';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw storePathError(store, err, `look at ${path}`) ?? err;
    // A symlink to nothing is not a missing store: creating it would fail (EEXIST) or, if its
    // target were made, put the store wherever the link points.
    const target = await readlink(path).catch(() => null);
    if (target === null) return 'missing';
    const what = path === store ? `store ${store} is` : `store ${store}: ${path} is`;
    throw new StoreError(
      'AIRLOCK_STORE_PATH',
      `${what} a symbolic link to ${quoted(target)}, which does not exist; pass --store DIR (or set AIRLOCK_STORE) naming a folder`,
      { subject: path },
      EXIT.USAGE,
    );
  }
  throw notAFolder(store, path, st.isFile() ? 'a file' : kindOf(st));
}

/** For commands that only use a store: it must exist (exit 2 otherwise; nothing is created). */
export async function requireStore(store: string): Promise<void> {
  if ((await storeKind(store)) === 'missing') {
    throw new StoreError(
      'AIRLOCK_NO_STORE',
      `store ${store} does not exist; check --store or AIRLOCK_STORE, or create it by importing a package (airlock import PKG --store ${store})`,
      { subject: store },
      EXIT.USAGE,
    );
  }
}

/**
 * Create the store folder and its missing parents one by one (never mkdir's recursive mode,
 * which loops forever under /proc on Node 20), and return the folders made, outermost first,
 * so that a failed command can remove exactly what it created (removeCreated).
 */
export async function createStore(store: string): Promise<string[]> {
  const missing: string[] = [];
  for (let dir = store; (await storeKind(store, dir)) === 'missing'; dir = dirname(dir)) {
    missing.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  const created: string[] = [];
  for (const dir of missing) {
    try {
      await mkdir(dir);
      created.push(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && (await storeKind(store, dir)) === 'dir') continue; // made by a concurrent import
      await removeCreated(created);
      throw storePathError(store, err, `create folder ${dir}`) ?? err;
    }
  }
  return created;
}

/** The nearest folder that exists at or above `store` (where a store to be created would live). */
export async function existingAncestor(store: string): Promise<string> {
  let dir = store;
  while ((await storeKind(store, dir)) === 'missing' && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** Remove folders this command created, innermost first, and only while they are empty. */
export async function removeCreated(created: readonly string[]): Promise<void> {
  if (created.length > 0) await removeEmptyUpTo(created.at(-1)!, created[0]!);
}

/** Every folder airlock keeps inside a store, with what it keeps there (the words of a refusal). */
export function storeFolders(store: string): ReadonlyArray<{ dir: string; holds: string }> {
  return [
    { dir: join(store, 'versions'), holds: "the store's versions" },
    { dir: join(store, 'staging'), holds: 'its import work' },
    { dir: join(store, 'trust'), holds: "the store's trust policy and the sequences it has seen" },
    { dir: join(store, 'trust', 'chain'), holds: 'every trust policy the store accepted' },
    { dir: join(store, 'leases'), holds: 'the leases of running servers' },
    { dir: join(store, 'downloads'), holds: 'bundle downloads in progress' },
  ];
}

/**
 * One folder inside the store is the store's own folder (true) or absent (false). A file, a FIFO
 * or a symbolic link there (into another store, or dangling) is a damaged store: refused in words
 * (exit 2, AIRLOCK_STORE_PATH) and never followed, so nothing is read or written outside the store.
 */
export async function checkStoreFolder(
  store: string,
  dir: string,
  holds = storeFolders(store).find((f) => f.dir === dir)?.holds ?? 'its files',
): Promise<boolean> {
  return (await storeFolderId(store, dir, holds)) !== null;
}

/** checkStoreFolder, giving which folder it is (its inode number; null: absent), so a folder put in its place later is told apart. */
export async function storeFolderId(store: string, dir: string, holds: string): Promise<number | null> {
  const st = await lstat(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw storePathError(store, err, `look at ${dir}`) ?? err;
  });
  if (st === null) return null;
  if (st.isDirectory()) return st.ino;
  const what = st.isSymbolicLink() ? `a symbolic link (to ${quoted(await readlink(dir).catch(() => '?'))}), which is not followed` : kindOf(st);
  throw new StoreError(
    'AIRLOCK_STORE_PATH',
    `store ${store} is damaged: ${dir} is ${what}, not a folder (airlock keeps ${holds} there); move it out of the store`,
    { subject: dir },
    EXIT.USAGE,
  );
}

/** Every folder inside the store checked (checkStoreFolder), outermost first; which of them exist. */
export async function checkStoreFolders(store: string): Promise<Set<string>> {
  const present = new Set<string>();
  for (const { dir, holds } of storeFolders(store)) if (await checkStoreFolder(store, dir, holds)) present.add(dir);
  return present;
}
