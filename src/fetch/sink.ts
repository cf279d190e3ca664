import { Writable } from 'node:stream';
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Digests } from './digests.js';

export { Digests };

/** Running digests of the bytes that are in the part file: sha256 always, md5 only when an ETag can check it. */
export function newDigests(withMd5: boolean): Digests {
  return new Digests(withMd5);
}

/**
 * Rebuild the digests of an existing part by reading it once, streaming (node's Hash state cannot
 * be persisted across runs, so re-reading is the honest way to resume the digest).
 */
export async function rehash(path: string, length: number, withMd5: boolean): Promise<Digests> {
  const d = newDigests(withMd5);
  if (length === 0) return d;
  for await (const chunk of createReadStream(path, { start: 0, end: length - 1, highWaterMark: 1 << 20 })) {
    d.update(chunk as Buffer);
    await d.ready();
  }
  return d;
}

export type OpenFile = (path: string, flags: string) => Promise<FileHandle>;

/**
 * A Writable into the part file at a fixed offset that updates the digests only after the bytes
 * are written. So `written` and the digests always describe exactly the bytes on disk, even when
 * the connection drops or the disk fills in the middle of a chunk: resume never hashes a byte
 * twice or skips one. Backpressure is the stream's own (one write in flight at a time).
 * No fsync per attempt: a completed part is copied into the package, which is fsynced; a part
 * kept for a later resume is fsynced once when the download stops (download.ts, syncPart).
 */
export class PartSink extends Writable {
  written: number;
  private fh: FileHandle | undefined;
  private inflight: Promise<unknown> = Promise.resolve();

  private readonly openFile: OpenFile;
  private readonly onWritten: ((bytes: number) => void) | undefined;

  constructor(private readonly path: string, private readonly offset: number, private readonly digests: Digests,
    o: { openFile?: OpenFile; onWritten?: (bytes: number) => void } = {}) {
    super({ highWaterMark: 1 << 20 });
    this.written = offset;
    this.openFile = o.openFile ?? open;
    this.onWritten = o.onWritten;
  }

  override _construct(cb: (err?: Error | null) => void): void {
    // 'r+' keeps the bytes we already have; offset 0 means a fresh start, so truncate.
    this.openFile(this.path, this.offset === 0 ? 'w' : 'r+').then((fh) => { this.fh = fh; cb(); }, cb);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, cb: (err?: Error | null) => void): void {
    const p = this.writeAll(chunks.map((c) => c.chunk));
    this.inflight = p.catch(() => {});
    p.then(() => cb(), cb);
  }

  private async writeAll(bufs: Buffer[]): Promise<void> {
    for (const buf of bufs) {
      let done = 0;
      while (done < buf.length) {
        // A short write (possible near ENOSPC) is continued, and only what landed is hashed.
        const { bytesWritten } = await this.fh!.write(buf, done, buf.length - done, this.written);
        const landed = buf.subarray(done, done + bytesWritten);
        this.digests.update(landed);
        this.written += bytesWritten;
        done += bytesWritten;
      }
    }
    this.onWritten?.(this.written);
    await this.digests.ready();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    // Wait for the write in flight so `written` is final, then drop anything past it.
    void this.inflight.then(async () => {
      if (this.fh) {
        await this.fh.truncate(this.written).catch(() => {});
        await this.fh.close().catch(() => {});
      }
    }).then(() => cb(err));
  }
}

/** Make a part that is kept for a later run durable (it will be trusted up to its length). */
export async function syncPart(path: string): Promise<void> {
  const fh = await open(path, 'r+').catch(() => undefined);
  if (!fh) return;
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
