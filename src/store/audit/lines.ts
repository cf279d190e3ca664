import type { FileHandle } from 'node:fs/promises';
import { CHUNK, MAX_LINE_BYTES } from './files.js';

/** Streaming the log forwards, line by line, in fixed memory (the chain check reads it so). */
/** Each line is handed over without its "\n" while it is in the buffer. */
export interface LineSink {
  /** A complete line of at most MAX_LINE_BYTES, `buf[start, stop)` (no Buffer made for it), ending at file offset `end` (past its "\n"); false stops. */
  line(buf: Buffer, start: number, stop: number, end: number): boolean;
  /** A line longer than MAX_LINE_BYTES (its first bytes); false stops, true skips it (to its "\n"). */
  overlong(prefix: Buffer): boolean;
}
export interface LinesRead {
  /** File offset just past the last complete line handed over. */
  end: number;
  /** Bytes after that without a "\n" (at most MAX_LINE_BYTES; 0 when stopped or skipping an overlong one). */
  tail: number;
  stopped: boolean;
}

/** Every line of an open file from offset `from`, streamed in fixed memory (CHUNK + MAX_LINE_BYTES), in order. */
export async function readLines(fh: FileHandle, sink: LineSink, from = 0): Promise<LinesRead> {
  const buf = Buffer.allocUnsafe(CHUNK + MAX_LINE_BYTES + 1);
  let have = 0; // bytes held in buf
  let base = from; // file offset of buf[0]
  let lastEnd = from;
  let skipping = false; // inside an overlong line already reported
  for (;;) {
    const scanFrom = have; // the bytes kept from the last round hold no "\n"
    const { bytesRead } = await fh.read(buf, have, buf.length - have, base + have);
    if (bytesRead === 0) break;
    have += bytesRead;
    const view = buf.subarray(0, have);
    let start = 0;
    for (let nl = view.indexOf(0x0a, scanFrom); nl >= 0; nl = view.indexOf(0x0a, start)) {
      const end = base + nl + 1;
      if (skipping) skipping = false;
      else if (nl - start > MAX_LINE_BYTES ? !sink.overlong(Buffer.from(view.subarray(start, start + 200))) : !sink.line(view, start, nl, end))
        return { end: lastEnd, tail: 0, stopped: true };
      lastEnd = end;
      start = nl + 1;
    }
    if (!skipping && have - start > MAX_LINE_BYTES) {
      if (!sink.overlong(Buffer.from(view.subarray(start, start + 200)))) return { end: lastEnd, tail: 0, stopped: true };
      skipping = true;
    }
    if (skipping) {
      base += have;
      have = 0;
    } else {
      buf.copyWithin(0, start, have);
      base += start;
      have -= start;
    }
  }
  return { end: lastEnd, tail: skipping ? 0 : have, stopped: false };
}
