import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ByteSource, FileRecord, ScanOptions, ScanResult } from './types.js';
import { ARCHIVE_CODES, malformed } from './errors.js';
import { openArchive, type OpenArchive } from './read.js';
import { probeCaseFolding } from './case-probe.js';
import { gcPacer } from '../util/gc.js';
import { hashRange } from './source.js';
import { wrappingFolder } from './wrapping.js';
import { TreeWriter, type FileSink } from './writer.js';

/** Read once: hash the archive bytes and every entry, enforce every safety rule, write nothing. */
export function scanArchive(src: ByteSource, opts: ScanOptions = {}): Promise<ScanResult> {
  return run(src, opts, undefined);
}

/**
 * Same, and write each file under `destDir` (new or empty), fsynced, at destDir/<stripped path>.
 * No path from the archive is trusted: targets are built from validated segments only.
 * On a refusal (or `opts.signal`) every write has ended before the promise rejects; the partial
 * tree stays in destDir for the caller (a staging folder) to remove.
 * Names differing only in case are refused when destDir's file system folds case: the caller's
 * `foldsCase`, or else one probe of destDir before anything is written.
 */
export async function extractArchive(src: ByteSource, destDir: string, opts: ScanOptions = {}): Promise<ScanResult> {
  const writer = await TreeWriter.create(destDir);
  const foldsCase = opts.foldsCase ?? (await probeCaseFolding(writer.root));
  return run(src, { ...opts, foldsCase }, writer);
}

/** Peak RSS flat at < 150 MB whatever the archive size: a minor GC every 8 MiB of entry bytes, see util/gc.ts. */
const spent = gcPacer();

async function run(src: ByteSource, opts: ScanOptions, writer: TreeWriter | undefined): Promise<ScanResult> {
  try {
    return await walk(src, opts, writer);
  } catch (err) {
    // Whatever failed (an entry, the index rule, a late fsync, a signal): no write may still be
    // in flight when the caller removes the tree.
    await writer?.settle();
    throw err;
  }
}

async function walk(src: ByteSource, opts: ScanOptions, writer: TreeWriter | undefined): Promise<ScanResult> {
  opts.signal?.throwIfAborted();
  const a = await openArchive(src, opts);
  // The archive digest is read beside the walk; a failed walk stops it (a refused 5 GB archive
  // must not keep the process reading after the refusal).
  const reading = new AbortController();
  const digest = opts.archiveSha256 !== undefined ? Promise.resolve(opts.archiveSha256) : hashRange(a.range, reading.signal);
  digest.catch(() => {}); // awaited below; never an unhandled rejection if the walk fails first
  try {
    return await entries(a, digest, opts, writer);
  } catch (err) {
    reading.abort(err);
    throw err;
  }
}

async function entries(a: OpenArchive, digest: Promise<string>, opts: ScanOptions, writer: TreeWriter | undefined): Promise<ScanResult> {
  const { signal, watch } = opts;
  const files: FileRecord[] = [];
  for await (const e of a.entries) {
    signal?.throwIfAborted();
    watch?.entry(e.path, e.size);
    const sink = writer?.file(e.path.split('/'));
    let sha256: string;
    try {
      sha256 = await consume(e.stream, sink, signal);
    } catch (err) {
      sink?.abort();
      throw err;
    }
    watch?.done(e.path, e.size, sha256);
    files.push({ path: e.path, size: e.size, sha256 });
    await sink?.end();
  }
  const strip = wrappingFolder(files.map((f) => f.path));
  for (const f of files) f.path = f.path.slice(strip.length);
  if (!files.some((f) => f.path === 'index.html')) {
    throw malformed(
      ARCHIVE_CODES.NO_INDEX,
      `${strip}index.html`,
      `the site has no index.html at its root${strip ? ` (after stripping the wrapping folder "${strip}")` : ''}`,
    );
  }
  files.sort((x, y) => Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)));
  await writer?.finish(strip);
  return { format: a.format, archiveSha256: await digest, archiveSize: a.range.length, files, strip };
}

/** Hash (and write) one entry's bytes as they stream by; no file is ever held in memory. */
function consume(stream: Readable, sink: FileSink | undefined, signal: AbortSignal | undefined): Promise<string> {
  const h = createHash('sha256');
  return new Promise((resolve, reject) => {
    const onAbort = () => stream.destroy(signal?.reason as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => signal?.removeEventListener('abort', onAbort);
    stream.on('data', (chunk: Buffer) => {
      try {
        h.update(chunk);
        sink?.write(chunk);
        spent(chunk.length);
      } catch (err) {
        stream.destroy(err as Error);
      }
    });
    stream.once('error', (err) => {
      done();
      reject(err);
    });
    stream.once('end', () => {
      done();
      resolve(h.digest('hex'));
    });
  });
}
