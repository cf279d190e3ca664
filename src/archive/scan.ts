import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ByteSource, FileRecord, ReadOptions, ScanResult } from './types.js';
import { ARCHIVE_CODES, malformed } from './errors.js';
import { openArchive } from './read.js';
import { minorGc } from '../util/gc.js';
import { hashRange } from './source.js';
import { wrappingFolder } from './wrapping.js';
import { TreeWriter, type FileSink } from './writer.js';

/** Read once: hash the archive bytes and every entry, enforce every safety rule, write nothing. */
export function scanArchive(src: ByteSource, opts: ReadOptions = {}): Promise<ScanResult> {
  return run(src, opts, undefined);
}

/**
 * Same, and write each file under `destDir` (new or empty), fsynced, at destDir/<stripped path>.
 * No path from the archive is trusted: targets are built from validated segments only.
 * On a refusal the partial tree stays in destDir for the caller (a staging folder) to remove.
 */
export async function extractArchive(src: ByteSource, destDir: string, opts: ReadOptions = {}): Promise<ScanResult> {
  return run(src, opts, await TreeWriter.create(destDir));
}

/** Peak RSS flat at < 150 MB whatever the archive size (issue 2): a minor GC every 8 MiB of entry bytes, see util/gc.ts. */
const GC_EVERY = 8 * 1024 * 1024;
let sinceGc = 0;
function spent(n: number): void {
  if ((sinceGc += n) < GC_EVERY) return;
  sinceGc = 0;
  minorGc();
}

async function run(src: ByteSource, opts: ReadOptions, writer: TreeWriter | undefined): Promise<ScanResult> {
  const a = await openArchive(src, opts);
  const digest = hashRange(a.range);
  digest.catch(() => {}); // awaited below; never an unhandled rejection if the walk fails first
  const files: FileRecord[] = [];
  try {
    for await (const e of a.entries) {
      const sink = writer?.file(e.path.split('/'));
      try {
        files.push({ path: e.path, size: e.size, sha256: await consume(e.stream, sink) });
      } catch (err) {
        sink?.abort();
        throw err;
      }
      await sink?.end();
    }
  } catch (err) {
    await writer?.settle();
    throw err;
  }
  const strip = wrappingFolder(files.map((f) => f.path));
  for (const f of files) f.path = f.path.slice(strip.length);
  if (!files.some((f) => f.path === 'index.html')) {
    throw malformed(ARCHIVE_CODES.NO_INDEX, `${strip}index.html`, `the site has no index.html at its root${strip ? ` (after stripping the wrapping folder "${strip}")` : ''}`);
  }
  files.sort((x, y) => Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)));
  await writer?.finish(strip);
  return { format: a.format, archiveSha256: await digest, archiveSize: a.range.length, files, strip };
}

/** Hash (and write) one entry's bytes as they stream by; no file is ever held in memory. */
function consume(stream: Readable, sink: FileSink | undefined): Promise<string> {
  const h = createHash('sha256');
  return new Promise((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => {
      try {
        h.update(chunk);
        sink?.write(chunk);
        spent(chunk.length);
      } catch (err) {
        stream.destroy(err as Error);
      }
    });
    stream.once('error', reject);
    stream.once('end', () => resolve(h.digest('hex')));
  });
}
