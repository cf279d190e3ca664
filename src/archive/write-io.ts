import { close, constants, fsync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** The file-level writes of TreeWriter (writer.ts). */

// O_EXCL: never open an existing file, and with O_CREAT never follow a symlink at the name.
export const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** Like Promise.all, but rejects only once every promise has settled (nothing left in flight). */
export async function settledAll(all: Promise<void>[]): Promise<void> {
  const failed = (await Promise.allSettled(all)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

export function writeAll(fd: number, chunk: Buffer): void {
  for (let off = 0; off < chunk.length; ) off += writeSync(fd, chunk, off);
}

export async function writeSmall(target: string, chunks: Buffer[], size: number): Promise<void> {
  const fh: FileHandle = await open(target, CREATE, 0o644);
  try {
    if (size > 0) await fh.writev(chunks);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export async function syncAndClose(fd: number): Promise<void> {
  try {
    await new Promise<void>((res, rej) => fsync(fd, (e) => (e ? rej(e) : res())));
  } finally {
    await new Promise<void>((res, rej) => close(fd, (e) => (e ? rej(e) : res())));
  }
}
