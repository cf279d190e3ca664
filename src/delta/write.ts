import { open } from 'node:fs/promises';
import { writeDurably } from '../util/fsx.js';
import { MIN_TAIL, encodeHeader, padded } from '../package/tar-header.js';
import { HashingOut } from './canonical.js';

/** A member's body: bytes, or `size` bytes of a file from `offset` (default 0). */
export type MemberBody = { bytes: Buffer } | { file: string; size: number; offset?: number };

/**
 * Write one of our own tars (delta package, volume) durably (writeDurably): under a name that must
 * not exist yet (never replaces a file), or, with `replace`, in place of the file (a signer adding
 * a signature, after `check` read the result). Members in the given order.
 */
export async function writeMembers(
  outPath: string,
  members: { name: string; body: MemberBody }[],
  mtime: Date,
  how: { replace?: boolean; check?: (tmp: string) => Promise<void>; signal?: AbortSignal } = {},
): Promise<{ path: string; sha256: string; size: number }> {
  const out = await writeDurably(
    outPath,
    async (fh) => {
      const tar = new HashingOut(fh);
      for (const m of members) {
        const size = 'bytes' in m.body ? m.body.bytes.length : m.body.size;
        await tar.write(encodeHeader(m.name, size, mtime));
        if ('bytes' in m.body) await tar.write(m.body.bytes);
        else await copyInto(tar, m.body.file, size, m.body.offset ?? 0, how.signal);
        if (padded(size) > size) await tar.write(Buffer.alloc(padded(size) - size));
      }
      await tar.write(Buffer.alloc(MIN_TAIL));
      await tar.flush();
      return tar;
    },
    { exclusive: !how.replace, check: how.check, signal: how.signal },
  );
  return { path: outPath, sha256: out.whole.digest('hex'), size: out.bytes };
}

async function copyInto(out: HashingOut, file: string, size: number, offset: number, signal?: AbortSignal): Promise<void> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let done = 0;
    while (done < size) {
      signal?.throwIfAborted();
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - done), offset + done);
      if (bytesRead === 0) throw new Error(`${file} is shorter than ${size} bytes`);
      await out.write(Buffer.from(buf.subarray(0, bytesRead))); // a copy: the writer may hold it until its next flush
      done += bytesRead;
    }
  } finally {
    await fh.close();
  }
}
