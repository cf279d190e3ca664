import { open, rename, rm, mkdir } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** fsync a file or a folder: open it read-only, sync, close. */
async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** fsync a directory so that a rename or create inside it survives a crash (POSIX rename(2) durability). */
export const fsyncDir: (dir: string) => Promise<void> = fsyncPath;

/** fsync one file (its data and size) so a later rename cannot expose it empty after a crash. */
export const fsyncFile: (path: string) => Promise<void> = fsyncPath;

/** A sibling temp name in the same folder, so that the final rename is atomic (same file system). */
export function tempSibling(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/**
 * Write a whole file so that readers see either the old content or the new, never a mix:
 * temp file, fsync, rename, fsync the folder. Never loses the user's data on a crash.
 */
export async function atomicWriteFile(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempSibling(path);
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await fsyncDir(dirname(path));
}

/** The sha256 of a file's bytes, streamed (hex). */
export async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}
