import { fstat } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { DamagedFileError } from './body-cache.js';
import type { LoadedIndex } from './version-index.js';

/**
 * What a read from a stored version must hold when no digest checks the bytes (a large file
 * streamed, a compressed variant): the file is reached with no symbolic link on its path inside
 * the version's folder (one swapped in while served would lead anywhere the server can read), and
 * once open it has the size its index records. Either failing is a damaged store (503), never
 * bytes from elsewhere. A site folder outside any store (preview) has no such root.
 */
export async function unlinked(idx: LoadedIndex, file: string): Promise<void> {
  const root = idx.source.root;
  if (root === null || !file.startsWith(root.dir + '/')) return;
  const real = await realpath(file).catch(() => null); // gone: the read says so
  if (real !== null && real !== root.real + file.slice(root.dir.length))
    throw new DamagedFileError(file, 'is reached through a symbolic link inside its version, which is not followed');
}

/** The opened file (`fd`) has `size` bytes. */
export function openedAsRecorded(fd: number, file: string, size: number): Promise<void> {
  return new Promise((resolve, reject) =>
    fstat(fd, (err, st) => {
      if (err) reject(err);
      else if (st.size !== size) reject(new DamagedFileError(file, `is ${st.size} bytes, not the ${size} its index records`));
      else resolve();
    }),
  );
}
