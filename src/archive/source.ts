import { open, stat } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ByteSource } from './types.js';
import { ARCHIVE_CODES, malformed } from './errors.js';
import { SpanFile, spanStream, type FileSpan } from './spans.js';
import { UsageError } from '../errors.js';
import { describeFsError, kindOf } from '../util/fsx.js';
import { escapeControls } from '../util/terminal.js';

/** A ByteSource checked against the file: absolute start and exact length. */
export interface Range {
  path: string;
  start: number;
  length: number;
  /** Set when the file is a concatenation of pieces of other files (see spans.ts). */
  spans?: readonly FileSpan[];
}

/** What readAt and handleRangeStream need of an open file: a FileHandle, or a SpanFile. */
export interface ReadHandle {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number; buffer: Buffer }>;
  close(): Promise<void>;
}

/** Open the file under a range (all its pieces, for spans). */
export async function openRange(r: Range): Promise<ReadHandle> {
  return r.spans ? SpanFile.open(r.spans) : open(r.path, 'r');
}

const SourceSchema = z.object({
  path: z.string().min(1),
  offset: z.number().int().nonnegative().optional(),
  length: z.number().int().nonnegative().optional(),
});

/** Large reads: fewer syscalls and fewer stream events (a page-cache read of 1 MiB is ~0.1 ms). */
export const READ_CHUNK = 1024 * 1024;

export async function resolveRange(src: ByteSource): Promise<Range> {
  const s = SourceSchema.parse(src);
  const spans = src.spans;
  let size: number;
  if (spans) {
    const f = await SpanFile.open(spans); // checks every piece against its file's size
    size = f.size;
    await f.close();
  } else {
    // A FIFO or a device is never opened: a FIFO's open waits for a writer, in a thread no signal reaches.
    const st = await stat(s.path).catch((err: unknown) => {
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      throw new UsageError(
        `archive ${escapeControls(s.path)} ${describeFsError(err)}; give the export archive or package itself`,
        { subject: s.path },
        missing ? 'AIRLOCK_NO_SUCH_FILE' : 'AIRLOCK_NOT_A_FILE',
      );
    });
    if (!st.isFile())
      throw new UsageError(
        `archive ${escapeControls(s.path)} is ${kindOf(st)}, not a regular file; give the export archive or package itself`,
        { subject: s.path },
        'AIRLOCK_NOT_A_FILE',
      );
    size = st.size;
  }
  const start = s.offset ?? 0;
  const length = s.length ?? Math.max(0, size - start);
  if (start + length > size) {
    throw malformed(ARCHIVE_CODES.TRUNCATED, s.path, `byte range ${start}+${length} runs past the end of the file (${size} bytes)`);
  }
  return spans ? { path: s.path, start, length, spans } : { path: s.path, start, length };
}

/** A stream over exactly the range (createReadStream's `end` is inclusive). */
export function rangeStream(r: Range, highWaterMark = READ_CHUNK): Readable {
  if (r.spans) return spanStream(r.spans, r.start, r.length, highWaterMark);
  if (r.length === 0) return createReadStream(r.path, { start: r.start, end: r.start - 1, highWaterMark, emitClose: true });
  return createReadStream(r.path, { start: r.start, end: r.start + r.length - 1, highWaterMark });
}

/** Read `length` bytes at `pos` (relative to the range) from an open handle; short reads are a truncation. */
export async function readAt(fh: ReadHandle, r: Range, pos: number, length: number, subject: string): Promise<Buffer> {
  if (pos < 0 || pos + length > r.length) {
    throw malformed(ARCHIVE_CODES.TRUNCATED, subject, `needs bytes ${pos}..${pos + length} but the archive has ${r.length}`);
  }
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, got, length - got, r.start + pos + got);
    if (bytesRead === 0) throw malformed(ARCHIVE_CODES.TRUNCATED, subject, 'unexpected end of file');
    got += bytesRead;
  }
  return buf;
}

export async function readHead(r: Range, n: number): Promise<Buffer> {
  const fh = await openRange(r);
  try {
    return await readAt(fh, r, 0, Math.min(n, r.length), r.path);
  } finally {
    await fh.close();
  }
}

/** sha256 of the exact bytes of the range (the archive digest of the manifest); `signal` stops the read. */
export async function hashRange(r: Range, signal?: AbortSignal): Promise<string> {
  const h = createHash('sha256');
  const stream = rangeStream(r);
  const stop = () => stream.destroy(signal?.reason as Error);
  signal?.addEventListener('abort', stop, { once: true });
  try {
    signal?.throwIfAborted();
    for await (const chunk of stream) h.update(chunk as Buffer);
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  return h.digest('hex');
}

/**
 * A Readable over [start, start+length) of an already open handle that never closes it
 * (fs.ReadStream closes its fd on destroy even with autoClose false).
 */
export function handleRangeStream(fh: ReadHandle, start: number, length: number): Readable {
  let pos = start;
  const endPos = start + length;
  return new Readable({
    highWaterMark: READ_CHUNK,
    read() {
      const n = Math.min(READ_CHUNK, endPos - pos);
      if (n <= 0) return void this.push(null);
      fh.read(Buffer.allocUnsafe(n), 0, n, pos).then(
        ({ bytesRead, buffer }) => {
          if (bytesRead === 0) return void this.destroy(new Error('unexpected end of file'));
          pos += bytesRead;
          this.push(buffer.subarray(0, bytesRead));
        },
        (err: Error) => this.destroy(err),
      );
    },
  });
}

/** sha256 of a ByteSource's exact bytes (a package's archive member, read in place). */
export async function hashByteSource(src: ByteSource, signal?: AbortSignal): Promise<string> {
  return hashRange(await resolveRange(src), signal);
}
