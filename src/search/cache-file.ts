import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { openRegularFileIfExists, refuseLinkedFolders, writeDurably } from '../util/fsx.js';
import { join } from 'node:path';

/**
 * The on-disk copy of a version's search index, `versions/<label>/search/index.json`: JSON lines —
 * a header (format, key of what it was built from), the body lines (SearchIndex.serializeLines),
 * and a trailer with the body's line count, size and sha256. Written as a stream (no one string of
 * the whole index: that alone would be hundreds of MB at 10,000 pages), durably (writeDurably); read as a stream of lines with a bound on the file and on
 * each line, and trusted only when header, key and trailer all match: anything else is reported
 * as damaged and the index is rebuilt.
 */
export const SEARCH_CACHE_FORMAT = 'airlock-search-index/3';
export const SEARCH_CACHE_NAME = 'index.json';
/** A larger file is refused unread. */
export const MAX_SEARCH_CACHE_BYTES = 1024 * 1024 * 1024;
/** A longer line is refused (the writer's batches stay well below it). */
export const MAX_SEARCH_CACHE_LINE = 64 * 1024 * 1024;

interface Header {
  format: string;
  key: string;
}
interface Trailer {
  end: true;
  lines: number;
  size: number;
  sha256: string;
}

export type CacheRead = { ok: true; lines: string[] } | { ok: false; reason: string };

/** Writes the cache file; answers the body's size in bytes. */
export async function writeSearchCache(dir: string, key: string, lines: Iterable<string>): Promise<number> {
  // Only its own folder is made: a version removed meanwhile is not made again to hold an index (its folder is gone: ENOENT).
  await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  refuseLinkedFolders(dir, 2); // the index's folder, its version's and versions/: a link swapped in is never written through
  let size = 0;
  await writeDurably(join(dir, SEARCH_CACHE_NAME), async (fh) => {
    await fh.writeFile(JSON.stringify({ format: SEARCH_CACHE_FORMAT, key } satisfies Header) + '\n');
    const hash = createHash('sha256');
    let count = 0;
    for (const line of lines) {
      const data = Buffer.from(line + '\n', 'utf8');
      hash.update(data);
      size += data.length;
      count++;
      await fh.writeFile(data);
    }
    await fh.writeFile(JSON.stringify({ end: true, lines: count, size, sha256: hash.digest('hex') } satisfies Trailer) + '\n');
  });
  return size;
}

/** The body lines of the cache file, null when there is none, or why it cannot be trusted. */
export async function readSearchCache(dir: string, key: string, max = MAX_SEARCH_CACHE_BYTES): Promise<CacheRead | null> {
  const file = join(dir, SEARCH_CACHE_NAME);
  try {
    refuseLinkedFolders(dir, 2);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null; // no index folder: no cache file
    return { ok: false, reason: (err as Error).message };
  }
  // A regular file only, opened once: a link is not followed (it would lead out of the store), a FIFO never waited on.
  let opened: Awaited<ReturnType<typeof openRegularFileIfExists>>;
  try {
    opened = await openRegularFileIfExists(file, (why) => new Error(why), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  if (opened === null) return null;
  if (opened.size > max) {
    await opened.fh.close();
    return { ok: false, reason: `${opened.size} bytes, more than the ${max} allowed` };
  }
  const all: string[] = [];
  const hash = createHash('sha256');
  let size = 0;
  let header: Partial<Header> | null = null;
  let last: string | null = null;
  const stream = opened.fh.createReadStream({ encoding: 'utf8', highWaterMark: 1 << 20 }); // closes the file when destroyed
  let partial = '';
  const take = (line: string): string | null => {
    if (header === null) {
      try {
        header = JSON.parse(line) as Partial<Header>;
      } catch {
        return 'header is not JSON';
      }
      if (header === null || typeof header !== 'object' || header.format !== SEARCH_CACHE_FORMAT)
        return `format ${JSON.stringify((header as Partial<Header> | null)?.format)} is not ${SEARCH_CACHE_FORMAT}`;
      if (header.key !== key) return 'built from other pages or by another build of airlock';
      return null;
    }
    if (last !== null) {
      const data = Buffer.from(last + '\n', 'utf8');
      hash.update(data);
      size += data.length;
      all.push(last);
    }
    last = line;
    return null;
  };
  try {
    for await (const chunk of stream) {
      partial += chunk as string;
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        const problem = take(partial.slice(0, nl));
        partial = partial.slice(nl + 1);
        if (problem) return { ok: false, reason: problem };
      }
      if (partial.length > MAX_SEARCH_CACHE_LINE) return { ok: false, reason: `a line longer than ${MAX_SEARCH_CACHE_LINE} characters` };
    }
  } finally {
    stream.destroy();
  }
  if (partial !== '') return { ok: false, reason: 'truncated (no end of line at the end)' };
  if (header === null) return { ok: false, reason: 'empty' };
  let t: Partial<Trailer>;
  try {
    t = JSON.parse(last ?? 'null') as Partial<Trailer>;
  } catch {
    return { ok: false, reason: 'no trailer line' };
  }
  if (t === null || typeof t !== 'object' || t.end !== true) return { ok: false, reason: 'no trailer line' };
  if (t.lines !== all.length || t.size !== size)
    return { ok: false, reason: `body is ${all.length} lines/${size} bytes, trailer says ${String(t.lines)}/${String(t.size)}` };
  if (hash.digest('hex') !== t.sha256) return { ok: false, reason: 'body digest does not match its trailer' };
  return { ok: true, lines: all };
}
