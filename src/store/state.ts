import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { StoreError } from '../errors.js';
import { atomicWriteFile } from '../util/fsx.js';
import { storePaths } from './paths.js';

export const StoreStateSchema = z.object({
  active: z.string().nullable(),
  previous: z.string().nullable(),
  updatedAt: z.string().nullable(),
});
export type StoreState = z.infer<typeof StoreStateSchema>;

const EMPTY: StoreState = { active: null, previous: null, updatedAt: null };

/** The active/previous pointers. A store without state.json has nothing active. */
export async function readState(store: string): Promise<StoreState> {
  const path = storePaths(store).state;
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ...EMPTY };
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    json = undefined;
  }
  const parsed = StoreStateSchema.safeParse(json);
  // Fail closed: a damaged pointer file is reported, never silently reset to "nothing active".
  if (!parsed.success) throw new StoreError('AIRLOCK_BAD_STATE', `store state ${path} is not valid JSON of the expected shape`, { subject: path });
  return parsed.data;
}

/** Durable pointer update (CONTRACT "Store guarantees"): temp file, fsync, rename, fsync the folder. */
export async function writeState(store: string, next: Omit<StoreState, 'updatedAt'>): Promise<StoreState> {
  const state: StoreState = { ...next, updatedAt: new Date().toISOString() };
  await atomicWriteFile(storePaths(store).state, JSON.stringify(state, null, 2) + '\n');
  return state;
}
