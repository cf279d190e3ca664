import { statfs } from 'node:fs/promises';
import { StoreError } from '../errors.js';

const BLOCK = 4096;
const MARGIN = 64 * 1024 * 1024;

/**
 * Bytes an import needs on disk, from the manifest alone (pure): the package copy, every site
 * file rounded up to a block, and a margin for metadata and folders.
 */
export function requiredBytes(packageSize: number, fileSizes: readonly number[]): number {
  let total = packageSize + MARGIN;
  for (const size of fileSizes) total += Math.ceil(size / BLOCK) * BLOCK + BLOCK;
  return total;
}

/** Refuse before writing anything rather than fill the disk halfway (AIRLOCK_NO_SPACE). */
export async function checkFreeSpace(dir: string, needed: number): Promise<void> {
  const fs = await statfs(dir);
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free < needed) {
    const mb = (n: number) => `${Math.ceil(n / 1024 / 1024)} MB`;
    throw new StoreError('AIRLOCK_NO_SPACE', `not enough free space in ${dir}: the import needs about ${mb(needed)}, ${mb(free)} available`, { subject: dir, needed, free });
  }
}
