import { z } from 'zod';
import { atomicWriteFile } from '../util/fsx.js';
import { storeKind, storePathError } from './location.js';
import { readJsonFile } from './meta.js';
import { isLabel, storePaths } from './paths.js';

const Pointer = z.string().refine(isLabel, 'not a version label').nullable();
export const StoreStateSchema = z.object({
  active: Pointer,
  previous: Pointer,
  updatedAt: z.string().nullable(),
});
export type StoreState = z.infer<typeof StoreStateSchema>;

const EMPTY: StoreState = { active: null, previous: null, updatedAt: null };

/**
 * The active/previous pointers. A store without state.json (or no store yet) has nothing active.
 * Fail closed: a damaged pointer file is reported (exit 2, AIRLOCK_BAD_STATE), never silently
 * reset to "nothing active" (prune would then delete what a server is serving).
 */
export async function readState(store: string): Promise<StoreState> {
  const path = storePaths(store).state;
  try {
    return await readJsonFile(path, StoreStateSchema, 'store state', { maxBytes: 64 * 1024, code: 'AIRLOCK_BAD_STATE' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ...EMPTY };
    if (code === 'ENOTDIR') await storeKind(store); // says "store S is a file" (exit 2)
    throw storePathError(store, err, `read ${path}`) ?? err;
  }
}

/** Durable pointer update (the store guarantees: all or nothing, durable): temp file, fsync, rename, fsync the folder. */
export async function writeState(store: string, next: Omit<StoreState, 'updatedAt'>): Promise<StoreState> {
  const state: StoreState = { ...next, updatedAt: new Date().toISOString() };
  await atomicWriteFile(storePaths(store).state, JSON.stringify(state, null, 2) + '\n');
  return state;
}
