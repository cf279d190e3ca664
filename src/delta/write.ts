import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsyncDir, tempSibling } from '../util/fsx.js';
import { outputExists } from '../package/writer.js';
import { MIN_TAIL, encodeHeader, padded } from '../package/tar-header.js';
import { HashingOut } from './canonical.js';

/** A member's body: bytes, or `size` bytes of a file from `offset` (default 0). */
export type MemberBody = { bytes: Buffer } | { file: string; size: number; offset?: number };

/**
 * Write one of our own tars (delta package, volume) atomically: temp sibling, fsync, then a name
 * that must not exist yet (never replaces a file), fsync of the folder. Members in the given order.
 */
export async function writeMembers(outPath: string, members: { name: string; body: MemberBody }[], mtime: Date): Promise<{ path: string; sha256: string; size: number }> {
  const tmp = tempSibling(outPath);
  const fh = await open(tmp, 'wx', 0o644);
  let out: HashingOut;
  try {
    out = new HashingOut(fh);
    for (const m of members) {
      const size = 'bytes' in m.body ? m.body.bytes.length : m.body.size;
      await out.write(encodeHeader(m.name, size, mtime));
      if ('bytes' in m.body) await out.write(m.body.bytes);
      else await copyInto(out, m.body.file, size, m.body.offset ?? 0);
      if (padded(size) > size) await out.write(Buffer.alloc(padded(size) - size));
    }
    await out.write(Buffer.alloc(MIN_TAIL));
    await out.flush();
    await fh.sync();
    await fh.close();
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  try {
    if (await open(outPath, 'r').then(async (f) => { await f.close(); return true; }, () => false)) throw outputExists(outPath);
    await rename(tmp, outPath);
  } finally {
    await rm(tmp, { force: true });
  }
  await fsyncDir(dirname(outPath));
  return { path: outPath, sha256: out.whole.digest('hex'), size: out.bytes };
}

async function copyInto(out: HashingOut, file: string, size: number, offset: number): Promise<void> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let done = 0;
    while (done < size) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - done), offset + done);
      if (bytesRead === 0) throw new Error(`${file} is shorter than ${size} bytes`);
      await out.write(Buffer.from(buf.subarray(0, bytesRead))); // a copy: the writer may hold it until its next flush
      done += bytesRead;
    }
  } finally {
    await fh.close();
  }
}
