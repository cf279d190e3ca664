import { open } from 'node:fs/promises';

/** fsync one file (its data and size) so a later rename cannot expose it empty after a crash. */
export async function fsyncFile(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
