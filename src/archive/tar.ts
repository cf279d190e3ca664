import { Readable } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import type { ArchiveEntry, ArchiveLimits } from './types.js';
import { RATIO_FLOOR_BYTES } from './types.js';
import { ARCHIVE_CODES, malformed, unsafe } from './errors.js';
import type { EntryGuard } from './guard.js';
import { Channel } from './channel.js';
import { nulInMeta, tarKind } from './tar-kind.js';
import { rangeStream, type Range } from './source.js';
import { pumpEntries } from './pump.js';
import { describeFsError } from '../util/fs-words.js';

const INFLATE_CHUNK = 256 * 1024;

/**
 * Tar and tar.gz through node-tar's streaming Parser (never its extract(): every decision is
 * ours). The gzip layer is ours too, so the bomb check sees bytes inflated vs bytes consumed.
 */
export function readTar(r: Range, gzip: boolean, guard: EntryGuard, limits: ArchiveLimits): AsyncGenerator<ArchiveEntry> {
  const ch = new Channel<ArchiveEntry>();
  const input = rangeStream(r);
  // strict: every node-tar warning (bad checksum, truncation) becomes an error: fail closed.
  const parser = new Parser({ strict: true, zstd: false, brotli: false });
  let current: Readable | undefined;
  let sawEof = false;
  let lastName = r.path;

  const fail = (err: unknown) => {
    if (ch.failed) return;
    ch.fail(err);
    // A stream nobody listens to yet (still queued) is closed quietly: the channel carries the error.
    if (current && !current.readableEnded) current.destroy(current.listenerCount('error') > 0 ? (err as Error) : undefined);
    input.destroy();
    gunzip?.destroy();
    parser.abort(err as Error);
  };

  let gunzip: Gunzip | undefined;
  input.on('error', (e) => fail(malformed(ARCHIVE_CODES.TRUNCATED, r.path, `cannot read: ${describeFsError(e, 'write')}`, {}, e)));
  if (gzip) {
    gunzip = createGunzip({ chunkSize: INFLATE_CHUNK });
    watchInflation(gunzip, limits, lastNameOf, fail);
    gunzip.on('error', (e: NodeJS.ErrnoException) => fail(zlibError(e, lastName)));
    input.pipe(gunzip).pipe(parser as unknown as NodeJS.WritableStream);
  } else {
    input.pipe(parser as unknown as NodeJS.WritableStream);
  }
  function lastNameOf() {
    return lastName;
  }

  parser.on('meta', (meta: string) => {
    const bad = nulInMeta(meta);
    if (bad !== undefined) fail(unsafe(ARCHIVE_CODES.UNSAFE_PATH, bad, 'NUL byte in name (pax or GNU long-name record)'));
  });
  parser.on('ignoredEntry', (e: ReadEntry) => fail(unsafe(ARCHIVE_CODES.SPECIAL_FILE, e.path, `${e.type} entries are not supported`, { kind: e.type })));
  parser.on('eof', () => (sawEof = true));
  parser.on('error', (e: Error & { tarCode?: string; entry?: ReadEntry; header?: { path?: string } }) => {
    const subject = e.entry?.path ?? e.header?.path ?? lastName;
    const truncated = /truncated/i.test(e.message);
    fail(malformed(truncated ? ARCHIVE_CODES.TRUNCATED : ARCHIVE_CODES.CORRUPT, subject, e.message, { tarCode: e.tarCode }, e));
  });
  parser.on('end', () => {
    if (!sawEof) fail(malformed(ARCHIVE_CODES.TRUNCATED, lastName, 'tar ends without its end-of-archive blocks (truncated)'));
    else ch.close();
  });
  parser.on('entry', (e: ReadEntry) => {
    lastName = e.path;
    if (ch.failed) return void e.resume();
    try {
      if (e.type !== e.header.type || (e.linkpath && !/Link$/.test(e.type))) {
        // A pax "type" or "linkpath" record that disagrees with the header: readers would differ.
        throw unsafe(ARCHIVE_CODES.SPECIAL_FILE, e.path, `pax header rewrites the entry type (${e.header.type} -> ${e.type})`);
      }
      const d = guard.admit({ name: e.path, kind: tarKind(e.type), size: e.size, typeName: e.type });
      if (d.kind === 'dir') return void e.resume();
      current = toReadable(e);
      ch.push({ path: d.path, size: e.size, stream: current });
    } catch (err) {
      e.resume();
      fail(err);
    }
  });

  return pumpEntries(ch, () => {
    input.destroy();
    gunzip?.destroy();
  });
}

/** gzip bomb: inflated bytes vs compressed bytes actually consumed by zlib (bytesWritten). */
function watchInflation(g: Gunzip, limits: ArchiveLimits, name: () => string, fail: (e: unknown) => void): void {
  let inflated = 0;
  g.on('data', (chunk: Buffer) => {
    if (inflated === 0 && chunk.length >= 2 && chunk[0] === 0x1f && chunk[1] === 0x8b) {
      fail(malformed(ARCHIVE_CODES.UNSUPPORTED, name(), 'gzip inside gzip (nested compression) is not supported'));
    }
    inflated += chunk.length;
    const consumed = Math.max(1, g.bytesWritten);
    if (inflated > RATIO_FLOOR_BYTES && inflated / consumed > limits.maxRatio) {
      fail(
        unsafe(ARCHIVE_CODES.BOMB, name(), `gzip stream inflates ${inflated} bytes from ${consumed} (ratio above ${limits.maxRatio}: a decompression bomb)`, {
          inflated,
          consumed,
        }),
      );
    }
  });
}

export function zlibError(e: NodeJS.ErrnoException, subject: string) {
  const truncated = e.code === 'Z_BUF_ERROR' || /unexpected end/i.test(e.message);
  return malformed(
    truncated ? ARCHIVE_CODES.TRUNCATED : ARCHIVE_CODES.CORRUPT,
    subject,
    truncated ? 'compressed data ends early (truncated)' : 'corrupt compressed data',
    {},
    e,
  );
}

/**
 * node-tar entries are Minipass streams; hand out a Node Readable with backpressure kept. The
 * entry stays paused until the consumer first reads (a Minipass 'data' listener would start it
 * flowing): the parser only moves to the next header once this one is consumed, so memory holds
 * at most one entry's chunk in flight, whatever the archive size.
 */
function toReadable(e: ReadEntry): Readable {
  let started = false;
  const out = new Readable({
    highWaterMark: 1024 * 1024,
    read() {
      if (!started) {
        started = true;
        e.on('data', (c: Buffer) => {
          if (!out.push(c)) e.pause();
        });
        e.on('end', () => out.push(null));
      }
      e.resume();
    },
  });
  return out;
}
