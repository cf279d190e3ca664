import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fsyncDir } from '../util/fsx.js';
import { liveLeasedVersions } from './leases.js';
import { listVersions } from './list.js';
import { withLock, type LockOptions } from './lock.js';
import { storePaths, versionDir } from './paths.js';
import { readState } from './state.js';

/**
 * Which versions `prune --keep N` deletes (pure): all but the N most recently imported, never a
 * protected one. Protected: the active version (CONTRACT), the previous one (so `rollback` always
 * has somewhere to go) and any version leased by a live server (issue 3: never pull a version
 * from under a server).
 */
export function choosePrunable(newestFirst: readonly string[], keep: number, protectedLabels: ReadonlySet<string>): string[] {
  return newestFirst.slice(Math.max(0, keep)).filter((v) => !protectedLabels.has(v));
}

/** `airlock prune --keep N`: returns the labels deleted. */
export async function prune(store: string, keep: number, o?: LockOptions): Promise<string[]> {
  return withLock(store, async () => {
    const state = await readState(store);
    const versions = await listVersions(store);
    const leased = await liveLeasedVersions(store);
    const protectedLabels = new Set([state.active, state.previous, ...leased].filter((v): v is string => Boolean(v)));
    const doomed = choosePrunable(versions.map((v) => v.version), keep, protectedLabels);
    const { staging, versions: versionsDir } = storePaths(store);
    const deleted: string[] = [];
    for (const label of doomed) {
      // Move out first (one atomic rename), so nobody ever sees a half-deleted version; then
      // look at the leases again: a server that leased it meanwhile gets it back at once.
      await mkdir(staging, { recursive: true });
      const aside = join(staging, `prune-${randomBytes(6).toString('hex')}`);
      await rename(versionDir(store, label), aside);
      if ((await liveLeasedVersions(store)).has(label)) {
        await rename(aside, versionDir(store, label));
        continue;
      }
      await fsyncDir(versionsDir);
      await rm(aside, { recursive: true, force: true });
      deleted.push(label);
    }
    await rmdir(staging).catch(() => {}); // only when empty
    return deleted;
  }, o);
}
