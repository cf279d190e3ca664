import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { atomicWriteFile, kindOf } from '../util/fsx.js';
import { EXIT, StoreError } from '../errors.js';
import { requireVersion } from './activate.js';
import { readJsonFile } from './meta.js';
import { checkLabel, isLabel, storePaths } from './paths.js';
import { isAlive, self } from './proc.js';
import { checkStoreFolder, storePathError } from './location.js';

const LeaseSchema = z.object({ pid: z.number().int().positive(), start: z.string(), version: z.string().refine(isLabel), startedAt: z.string() });
export type LeaseRecord = z.infer<typeof LeaseSchema>;

export interface Lease {
  readonly version: string;
  update(label: string): Promise<void>;
  release(): Promise<void>;
}

const leasePath = (store: string, pid: number) => join(storePaths(store).leases, `${pid}.json`);

/** This process's lease writes, one at a time (each an atomic write: temp file, rename). */
let writing: Promise<void> = Promise.resolve();

function write(store: string, label: string, startedAt: string): Promise<void> {
  const next = writing.then(() => writeNow(store, label, startedAt));
  writing = next.catch(() => {});
  return next;
}

async function writeNow(store: string, label: string, startedAt: string): Promise<void> {
  await checkStoreFolder(store, storePaths(store).leases); // a file, a FIFO or a symlink there: said in words, never followed
  const rec: LeaseRecord = { ...self, version: label, startedAt };
  await atomicWriteFile(leasePath(store, self.pid), JSON.stringify(rec) + '\n').catch((err: unknown) => {
    // A store the server may read but not write (a read-only mount, another owner): said in words, exit 2.
    throw storePathError(store, err, `write this server's lease in ${storePaths(store).leases} (prune keeps the versions live servers name there)`) ?? err;
  });
  // Written first, checked second: a prune that moved the version away before seeing this lease
  // is caught here; one that runs later sees the lease and keeps (or restores) the version.
  try {
    await requireVersion(store, label);
  } catch (err) {
    await rm(leasePath(store, self.pid), { force: true });
    throw err;
  }
}

/**
 * A server announces the version it serves (S/leases/<pid>.json) so that prune never deletes it.
 * A lease is only as alive as its pid: a killed server's lease is ignored and removed by prune.
 */
export async function acquireLease(store: string, label: string): Promise<Lease> {
  const startedAt = new Date().toISOString();
  await write(store, checkLabel(label), startedAt);
  let version = label;
  return {
    get version() {
      return version;
    },
    async update(next: string) {
      await write(store, checkLabel(next), startedAt);
      version = next;
    },
    async release() {
      await rm(leasePath(store, self.pid), { force: true });
    },
  };
}

/**
 * The leases of live processes, read only (for `list`). A lease file that does not parse, is
 * not a lease of the contract's shape, or belongs to a dead pid is skipped: files are written
 * atomically, so such a file was left by a killed server or edited by hand. `onStale` gets the
 * leases of dead processes apart from the entries that are not leases airlock can read (with why).
 */
export async function readLeases(
  store: string,
  onStale?: (dead: string[], unreadable: Array<{ path: string; why: string }>) => Promise<void>,
): Promise<LeaseRecord[]> {
  const dir = storePaths(store).leases;
  const names = await readdir(dir).catch(() => [] as string[]);
  const live: LeaseRecord[] = [];
  const dead: string[] = [];
  const unreadable: Array<{ path: string; why: string }> = [];
  for (const name of names.filter((n) => /^\d+\.json$/.test(n)).sort()) {
    const path = join(dir, name);
    const st = await lstat(path).catch(() => null);
    if (st === null) continue; // gone meanwhile: a server that stopped
    if (!st.isFile()) {
      unreadable.push({ path, why: st.isSymbolicLink() ? 'a symbolic link, which is not followed' : kindOf(st) });
      continue;
    }
    const rec = await readJsonFile(path, LeaseSchema, 'lease', { maxBytes: 64 * 1024 }).catch(() => null);
    if (rec === null || `${rec.pid}.json` !== name)
      unreadable.push({ path, why: rec === null ? 'not a lease airlock can read' : `a lease of pid ${rec.pid}, not of pid ${name.slice(0, -5)}` });
    else if (isAlive(rec.pid, rec.start)) live.push(rec);
    else dead.push(path);
  }
  if (dead.length > 0 || unreadable.length > 0) await onStale?.(dead, unreadable);
  return live;
}

/**
 * Leases of dead processes are removed. An entry under a lease's name that is not a lease airlock
 * can read (a folder, a FIFO, a symbolic link, garbage, another pid's lease) may protect a version
 * no one can tell: it is refused in words, before any lease is removed, so prune changes nothing.
 */
export async function removeDeadLeases(store: string, dead: string[], unreadable: ReadonlyArray<{ path: string; why: string }>): Promise<void> {
  const bad = unreadable[0];
  if (bad) {
    throw new StoreError(
      'AIRLOCK_STORE_PATH',
      `store ${store} is damaged: ${bad.path} is ${bad.why}, not a lease file (serve writes one per server there), so no one can tell which version it keeps; if no server uses it, move it out of the store`,
      { subject: bad.path },
      EXIT.USAGE,
    );
  }
  for (const path of dead) await rm(path, { force: true });
}
