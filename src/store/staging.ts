import { mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { storePaths } from './paths.js';

/**
 * Under the store lock nothing in S/staging is in progress, so everything there is what a
 * crashed or killed import (or prune) left behind: remove it (CONTRACT "Store guarantees").
 */
export async function cleanStaging(store: string): Promise<string[]> {
  const dir = storePaths(store).staging;
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  for (const name of names) await rm(join(dir, name), { recursive: true, force: true });
  await rmdir(dir).catch(() => {}); // recreated on demand; an empty one is noise in the store
  return names;
}

/** A fresh, private work folder inside the store (same file system, so the commit is a rename). */
export async function makeStaging(store: string): Promise<string> {
  const dir = join(storePaths(store).staging, randomBytes(8).toString('hex'));
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Remove a work folder, and S/staging itself when empty, so a refused import leaves no trace. */
export async function dropStaging(dir: string, store: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await rmdir(storePaths(store).staging).catch(() => {});
}
