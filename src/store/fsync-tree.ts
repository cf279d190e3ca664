import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir } from '../util/fsx.js';

/** fsync one file (its data and size) so a later rename cannot expose it empty after a crash. */
export async function fsyncFile(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * fsync every folder of a tree, deepest first, so every entry created in it is durable before the
 * tree is published by rename (files are fsynced by whoever wrote them).
 */
export async function fsyncDirs(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  for (const e of entries) if (e.isDirectory()) await fsyncDirs(join(dir, e.name));
  await fsyncDir(dir);
}
