import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { DamagedFileError } from './body-cache.js';
import { pipeline, type Transform } from 'node:stream';
import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import { BR_QUALITY, GZIP_LEVEL } from '../store/variants/build.js';

/**
 * Compression on request, for an asset whose precompressed variants are not built yet (the
 * minutes after a start or a version switch, or a site served without a store).
 *
 * Decision (measured by `npm run bench:serve-ready -- --skip ready,big`, docs/benchmarks.md):
 * compress on the fly rather than only moving the asked-for files to the front of the background
 * build. Priority alone still sends the first reader identity bytes (or makes it wait behind a
 * worker's current job plus an fsync). On the fly, the first ten requests after a start sent
 * 84 KB instead of 569 KB; the price is one compression per file and coding, on a libuv thread
 * (never the event loop), competing with the background build for the cores. Brotli 5 emits its
 * output only at its end (a 273 KB bundle: ~33 ms of CPU, 155 ms to first byte on the loaded
 * 2-core machine, against 32 ms for identity), so while a body is made on request a tie in
 * Accept-Encoding goes to gzip (encoding.ts), which streams from its first 64 KB and costs about
 * two thirds of brotli's CPU for ~6 % more bytes: 45–72 ms to first byte against 39–41 ms for
 * identity in two runs (load average 9–13).
 * A client that prefers br (higher q) still gets br; once the variant files exist, br wins ties.
 *
 * The levels are the build's own (brotli BR_QUALITY with the same size hint and text mode, gzip
 * GZIP_LEVEL), and zlib's output does not depend on how its input is chunked: the body made here
 * has the very bytes of the variant the build writes later, so both carry the same ETag
 * ("<digest>-br") truthfully, and a client's cached copy revalidates across the swap.
 *
 * One flight per file and coding: readers arriving while it runs get the chunks so far, then the
 * rest as they come (streamed: chunked, no Content-Length). When it ends the body goes into the
 * server's byte-bounded body cache (keyed by digest and coding), so the next reader is answered
 * from memory with a length until the variant file takes over. A body too big for the cache is
 * still shared by the readers of its flight, which is abandoned when the last one hangs up.
 */
export type DynamicCoding = 'br' | 'gzip';

/** Called with each chunk, then once with null at the end; with an error instead when it failed. */
export type FlightListener = (chunk: Buffer | null, err?: unknown) => void;

/** Counters for tests and benchmarks: compressions started, flights not yet settled, flights abandoned by their last reader. */
export const compressStats = { started: 0, inFlight: 0, abandoned: 0 };

export function compressor(coding: DynamicCoding, size: number): Transform {
  return coding === 'br'
    ? createBrotliCompress({
        params: {
          [constants.BROTLI_PARAM_QUALITY]: BR_QUALITY,
          [constants.BROTLI_PARAM_SIZE_HINT]: size,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        },
      })
    : createGzip({ level: GZIP_LEVEL });
}

export class Flight {
  private readonly chunks: Buffer[] = [];
  private readonly listeners = new Set<FlightListener>();
  private settled = false;
  private ended = false;
  private readonly destroy: () => void;

  /**
   * `keep`: the body will be cached, so the flight runs to its end even when every reader has
   * gone. `done` is called once: with the body when it ended and `keep` is set, else with null.
   */
  constructor(
    file: string,
    coding: DynamicCoding,
    size: number,
    private readonly keep: boolean,
    private readonly done: (body: Buffer | null) => void,
    /** The source's digest: bytes that differ (a store file changed, or read through a link) end the flight with an error, never a kept body. */
    sha256: string | null = null,
  ) {
    compressStats.started++;
    compressStats.inFlight++;
    const src = createReadStream(file, { highWaterMark: 64 * 1024 });
    const hash = sha256 === null ? null : createHash('sha256');
    if (hash !== null) src.on('data', (c: Buffer | string) => void hash.update(c));
    const z = compressor(coding, size);
    this.destroy = () => {
      src.destroy();
      z.destroy();
    };
    z.on('data', (c: Buffer) => {
      this.chunks.push(c);
      for (const l of this.listeners) l(c);
    });
    // pipeline's callback comes when the compressor has taken all input, before its last output:
    // it reports errors only; the end is the compressor's 'end'.
    pipeline(src, z, (err) => {
      if (err && !this.settled) this.settle(null, err); // once abandoned, the premature close is ours
    });
    z.once('end', () => {
      if (this.settled) return;
      if (hash !== null && hash.digest('hex') !== sha256) return this.settle(null, new DamagedFileError(file, "does not match its package's digest"));
      this.ended = true;
      this.settle(this.keep ? Buffer.concat(this.chunks) : null);
      for (const l of this.listeners) l(null);
      this.listeners.clear();
    });
  }

  private settle(body: Buffer | null, err?: unknown): void {
    this.settled = true;
    compressStats.inFlight--;
    this.done(body);
    if (err !== undefined) {
      for (const l of this.listeners) l(null, err);
      this.listeners.clear();
    }
  }

  /** Replays what was compressed so far, then follows. */
  subscribe(l: FlightListener): void {
    for (const c of this.chunks) l(c);
    if (this.ended) l(null);
    else this.listeners.add(l);
  }

  unsubscribe(l: FlightListener): void {
    if (!this.listeners.delete(l) || this.listeners.size > 0 || this.keep || this.settled) return;
    compressStats.abandoned++;
    this.settle(null);
    this.destroy();
  }
}
