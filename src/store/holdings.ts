import { access, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { checkStoreFolder, checkStoreFolders, storePathError } from './location.js';
import { isLabel, storePaths, versionPaths } from './paths.js';

/** How many labels a "not in the store" message names before pointing at `airlock list`. */
const SHOWN = 12;

/**
 * The entries of the store's versions folder ([] when there is none yet). Anything else there
 * (a file, a FIFO) is a damaged store, refused in words (exit 2, AIRLOCK_STORE_PATH), as a
 * staging folder that is not a folder is.
 */
export async function versionNames(store: string): Promise<string[]> {
  if (!(await checkVersionsFolder(store))) return [];
  const dir = storePaths(store).versions;
  return readdir(dir).catch((err: unknown) => {
    throw storePathError(store, err, `read ${dir}`) ?? err;
  });
}

/**
 * The store's versions folder is its own folder (true) or absent (false). Every folder inside the
 * store is checked first (checkStoreFolders): a file, a FIFO or a symbolic link there (to another
 * store's versions or trust, or dangling) is a damaged store, refused in words (exit 2,
 * AIRLOCK_STORE_PATH) before anything reads or commits through it. So is a version folder that
 * is not the store's own: a symbolic link among the versions (into another store), or a version's
 * name held by a file or a FIFO.
 */
export async function checkVersionsFolder(store: string): Promise<boolean> {
  const dir = storePaths(store).versions;
  if (!(await checkStoreFolders(store)).has(dir)) return false;
  const names = await readdir(dir, { withFileTypes: true }).catch((err: unknown) => {
    throw storePathError(store, err, `read ${dir}`) ?? err;
  });
  for (const e of names) {
    if (e.isSymbolicLink() || (isLabel(e.name) && !e.isDirectory())) await checkStoreFolder(store, join(dir, e.name), `version ${e.name}'s files`);
  }
  return true;
}

/**
 * The labels of the store's complete versions (a folder with its version.json), sorted
 * (numbers in labels compared as numbers). Reads only; a store or versions/ that is missing holds
 * none; a versions/ that is not a folder is refused (versionNames).
 */
export async function storedLabels(store: string): Promise<string[]> {
  const root = storePaths(store).versions;
  const names = await versionNames(store);
  const complete = await Promise.all(
    names.filter(isLabel).map(async (n) =>
      (await access(versionPaths(join(root, n)).meta).then(
        () => true,
        () => false,
      ))
        ? n
        : null,
    ),
  );
  return complete.filter((n): n is string => n !== null).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/**
 * What a store holds, in words that complete a refusal (pure): "it holds v1, v2" (at most
 * SHOWN labels, then "… and N more (airlock list --store S)"), or, for an empty store, that it
 * holds no version yet and how to import one (`activate`: the import command activates it).
 */
export function describeHoldings(store: string, labels: readonly string[], o: { activate?: boolean } = {}): { empty: boolean; text: string } {
  if (labels.length === 0)
    return { empty: true, text: `the store holds no version yet; import one (airlock import PKG --store ${store}${o.activate ? ' --activate' : ''})` };
  const more = labels.length - SHOWN;
  return { empty: false, text: `it holds ${labels.slice(0, SHOWN).join(', ')}${more > 0 ? ` and ${more} more (airlock list --store ${store})` : ''}` };
}
