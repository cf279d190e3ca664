import type { KeyObject } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AirlockError } from '../../errors.js';
import { fsyncDir } from '../../util/fsx.js';
import { splitPackage, type SplitResult } from './write.js';

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
