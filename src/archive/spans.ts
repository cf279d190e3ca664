import type { FileHandle } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { openRegularFile } from '../util/fsx.js';
import { Readable } from 'node:stream';
import { ARCHIVE_CODES, malformed } from './errors.js';

/**
 * One piece of a logical file that lies in several files: bytes [start, start + length) of `path`.
 * A package split into volumes (src/package/volumes) is read in place as the concatenation of its
 * volumes' payloads — never joined into a copy.
 */
export interface FileSpan {
  path: string;
  start: number;
  length: number;
}

/** Bounded: a set of volumes, not a way to open thousands of descriptors. */
export const MAX_SPANS = 999;

/**
 * The subset of FileHandle that our readers use (positional read, stat, close), over the
 * concatenation of `spans`. Reads never cross a span boundary (a short read; callers loop).
 */
export class SpanFile {
  private constructor(
    private readonly spans: readonly FileSpan[],
    private readonly fhs: FileHandle[],
    private readonly starts: number[],
    readonly size: number,
  ) {}

  static async open(spans: readonly FileSpan[]): Promise<SpanFile> {
    if (spans.length === 0 || spans.length > MAX_SPANS)
      throw malformed(ARCHIVE_CODES.TRUNCATED, spans[0]?.path ?? 'volumes', `a logical file needs 1..${MAX_SPANS} pieces, not ${spans.length}`);
    const fhs: FileHandle[] = [];
    try {
      // Non-blocking and type-checked: a volume swapped for a FIFO or a device is refused, never waited on.
      for (const s of spans)
        fhs.push(await openRegularFile(s.path, (why) => new UsageError(`volume ${s.path} ${why}`, { subject: s.path }, 'AIRLOCK_NOT_A_FILE')));
    } catch (err) {
      await Promise.all(fhs.map((f) => f.close().catch(() => {})));
      throw err;
    }
    const starts: number[] = [];
    let total = 0;
    for (let i = 0; i < spans.length; i++) {
      const s = spans[i]!;
      const size = (await fhs[i]!.stat()).size;
      if (s.start + s.length > size) {
        await Promise.all(fhs.map((f) => f.close().catch(() => {})));
        throw malformed(ARCHIVE_CODES.TRUNCATED, s.path, `is truncated: needs bytes ${s.start}..${s.start + s.length} but has ${size}`);
      }
      starts.push(total);
      total += s.length;
    }
    return new SpanFile(spans, fhs, starts, total);
  }

  async stat(): Promise<{ size: number; isFile: () => boolean }> {
    return { size: this.size, isFile: () => true };
  }

  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number; buffer: Buffer }> {
    if (position >= this.size || length === 0) return { bytesRead: 0, buffer };
    let i = this.starts.length - 1;
    while (this.starts[i]! > position) i--;
    const s = this.spans[i]!;
    const within = position - this.starts[i]!;
    const n = Math.min(length, s.length - within);
    const { bytesRead } = await this.fhs[i]!.read(buffer, offset, n, s.start + within);
    return { bytesRead, buffer };
  }

  async close(): Promise<void> {
    await Promise.all(this.fhs.map((f) => f.close().catch(() => {})));
  }
}

/** A Readable over [start, start + length) of the logical file; opens and closes its own handles. */
export function spanStream(spans: readonly FileSpan[], start: number, length: number, chunk = 1024 * 1024): Readable {
  let file: SpanFile | null = null;
  let pos = start;
  const end = start + length;
  return new Readable({
    highWaterMark: chunk,
    async construct(cb) {
      try {
        file = await SpanFile.open(spans);
        if (end > file.size)
          throw malformed(ARCHIVE_CODES.TRUNCATED, spans[0]!.path, `byte range ${start}+${length} runs past the end of the volumes (${file.size} bytes)`);
        cb();
      } catch (err) {
        cb(err as Error);
      }
    },
    read() {
      const n = Math.min(chunk, end - pos);
      if (n <= 0) return void this.push(null);
      file!.read(Buffer.allocUnsafe(n), 0, n, pos).then(
        ({ bytesRead, buffer }) => {
          if (bytesRead === 0) return void this.destroy(malformed(ARCHIVE_CODES.TRUNCATED, spans[0]!.path, 'unexpected end of a volume'));
          pos += bytesRead;
          this.push(buffer.subarray(0, bytesRead));
        },
        (err: Error) => this.destroy(err),
      );
    },
    destroy(err, cb) {
      if (!file) return cb(err);
      file.close().then(
        () => cb(err),
        () => cb(err),
      );
    },
  });
}
