import { lstat, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { storePaths } from './paths.js';

const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );

/**
 * The store that holds `path` (itself or a folder above it, symbolic links resolved): `store`
 * when given, else any folder laid out as a store (a `versions` folder beside the store's state,
 * lock, staging, keys, leases, audit log or trust folder), so an output cannot land in a store the command was not told of.
 */
export async function storeHolding(path: string, store: string | undefined): Promise<string | null> {
  // The real path: its nearest existing part resolved (a symbolic link to a store's folder included).
  let tail = '';
  let real = path;
  for (let at = path; ; at = dirname(at)) {
    const r = await realpath(at).catch(() => null);
    if (r !== null) {
      real = tail === '' ? r : join(r, tail);
      break;
    }
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
    if (
      (await stat(p.versions).then(
        (st) => st.isDirectory(),
        () => false,
      )) &&
      (await Promise.all([p.state, p.lock, p.staging, p.trustedKeys, p.leases, join(dir, 'audit.log'), join(dir, 'trust')].map(exists))).some(Boolean)
    )
      return dir;
    if (dirname(dir) === dir) return null;
  }
}
