import type { KeyObject } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { AirlockError, outputExists } from '../../errors.js';
import { fsyncDir } from '../../util/fsx.js';
import { splitPackage, type SplitResult } from './write.js';

/**
 * Refuse (exit 2, AIRLOCK_EXISTS) before any work when a volume of the package `pkgPath` would be
 * (NAME.airlock.001 …) is already there: a split never replaces a file, and finding that out only
 * after writing the package wastes the whole run.
 */
export async function refuseExistingVolumes(pkgPath: string): Promise<void> {
  const name = basename(pkgPath);
  const there = await readdir(dirname(pkgPath)).catch(() => [] as string[]);
  const taken = there.filter((f) => f.startsWith(name + '.') && /^\d{3}$/.test(f.slice(name.length + 1))).sort();
  if (taken.length > 0) throw outputExists(join(dirname(pkgPath), taken[0]!), 'remove the old volumes or choose another --out');
}

/** Split the package just written into volumes beside it, then remove the single file. */
export async function splitWritten(pkgPath: string, split: number, signKey: KeyObject | undefined, signal?: AbortSignal): Promise<SplitResult> {
  const r = await splitPackage(pkgPath, { split, signKey, signal }).catch((err: unknown) => {
    if (err instanceof AirlockError) err.message += ` (the package itself is kept: ${pkgPath})`;
    throw err;
  });
  await rm(pkgPath, { force: true });
  await fsyncDir(dirname(pkgPath));
  return r;
}
