import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { atomicWriteFile } from '../util/fsx.js';
import { requireVersion } from './activate.js';
import { checkLabel, storePaths } from './paths.js';
import { isAlive, self } from './proc.js';

const LeaseSchema = z.object({ pid: z.number().int(), start: z.string(), version: z.string(), startedAt: z.string() });
export type LeaseRecord = z.infer<typeof LeaseSchema>;

export interface Lease {
  readonly version: string;
  update(label: string): Promise<void>;
  release(): Promise<void>;
}

const leasePath = (store: string, pid: number) => join(storePaths(store).leases, `${pid}.json`);

async function write(store: string, label: string, startedAt: string): Promise<void> {
  const rec: LeaseRecord = { ...self, version: label, startedAt };
  await atomicWriteFile(leasePath(store, self.pid), JSON.stringify(rec) + '\n');
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

/** Versions leased by live processes; lease files of dead ones (or unreadable ones) are removed. */
export async function liveLeasedVersions(store: string): Promise<Set<string>> {
  const dir = storePaths(store).leases;
  const names = await readdir(dir).catch(() => [] as string[]);
  const live = new Set<string>();
  for (const name of names.filter((n) => /^\d+\.json$/.test(n))) {
    const path = join(dir, name);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      continue; // released meanwhile
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const rec = LeaseSchema.safeParse(json);
    if (rec.success && isAlive(rec.data.pid, rec.data.start)) live.add(rec.data.version);
    else await rm(path, { force: true }); // files are written atomically: unparsable means not ours
  }
  return live;
}
