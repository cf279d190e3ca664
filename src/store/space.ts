import { statfs } from 'node:fs/promises';
import { EXIT, StoreError } from '../errors.js';
import { fmtBytes } from '../util/units.js';

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

/**
 * Refuse before writing anything rather than fill the disk halfway (AIRLOCK_NO_SPACE). `dir` is
 * the store, or the folder it will be created in; `store` names it in the message. A file
 * system with no blocks at all (/proc, /sys) cannot hold a store: a configuration error (exit 2).
 */
export async function checkFreeSpace(dir: string, needed: number, store = dir): Promise<void> {
  const fs = await statfs(dir);
  if (Number(fs.blocks) === 0) {
    throw new StoreError(
      'AIRLOCK_STORE_PATH',
      `store ${store} would be on a virtual file system (${dir} holds no data blocks, like /proc or /sys); choose a folder on a disk`,
      { subject: store },
      EXIT.USAGE,
    );
  }
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free < needed) {
    throw new StoreError(
      'AIRLOCK_NO_SPACE',
      `not enough free space for store ${store} (in ${dir}): the import needs about ${fmtBytes(needed)}, ${fmtBytes(free)} available`,
      { subject: store, needed, free },
    );
  }
}
