import { close, constants, fsync, open, writeSync, writev } from 'node:fs';
import { promisify } from 'node:util';

/** The file-level writes of TreeWriter (writer.ts). */

// O_EXCL: never open an existing file, and with O_CREAT never follow a symlink at the name.
export const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** Like Promise.all, but rejects only once every promise has settled (nothing left in flight). */
export async function settledAll(all: Promise<void>[]): Promise<void> {
  const failed = (await Promise.allSettled(all)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

export function writeAll(fd: number, chunk: Buffer): void {
  for (let off = 0; off < chunk.length;) off += writeSync(fd, chunk, off);
}

const openP = promisify(open);
const writevP = promisify(writev);
const fsyncP = promisify(fsync);
const closeP = promisify(close);

/**
 * A new small file: open, write, fsync, close through the callback API (a FileHandle per file
 * cost the main thread ~45 µs each in a CPU profile of a 2,916-file import). `sync` false: no
 * fsync, the caller makes the whole tree durable at once (TreeWriter.finish).
 */
export async function writeSmall(target: string, chunks: Buffer[], size: number, sync = true): Promise<void> {
  const fd = await openP(target, CREATE, 0o644);
  try {
    let left = size;
    let parts = chunks;
    while (left > 0) {
      const { bytesWritten } = await writevP(fd, parts);
      left -= bytesWritten;
      if (left > 0) parts = [Buffer.concat(parts).subarray(bytesWritten)]; // a short write: the rest
    }
    if (sync) await fsyncP(fd);
  } finally {
    await closeP(fd);
  }
}

/** fsync (unless `sync` is false: see writeSmall) and close a file written through its descriptor. */
export async function syncAndClose(fd: number, sync = true): Promise<void> {
  try {
    if (sync) await fsyncP(fd);
  } finally {
    await closeP(fd);
  }
}

/** fsync a file by name (the fallback when the file system could not be flushed at once). */
export async function fsyncByName(target: string): Promise<void> {
  const fd = await openP(target, constants.O_RDONLY);
  await syncAndClose(fd);
}
