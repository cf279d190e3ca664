import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { join } from 'node:path';
import { extractPage } from './extract.js';
import { SearchIndex } from './engine.js';
import { readSearchCache, writeSearchCache } from './cache-file.js';
import { describeFsError } from '../util/fs-words.js';
import { openRegularFileIfExists } from '../util/regular-file.js';

/**
 * Getting a version's search index: from its cache file when that is intact and was built from
 * the same pages by the same code, else by reading every page (bounded), extracting its main
 * content and indexing it, then writing the cache (a failure to write is reported, not fatal).
 * Runs in the search worker (worker-entry.ts), never on the server's event loop.
 */
export interface BuildInput {
  siteDir: string;
  pages: Array<{ path: string; sha256: string }>;
  /** Folder of the cache file, or null to keep the index in memory only (preview, tests). */
  cacheDir: string | null;
}
export interface BuildReport {
  from: 'cache' | 'built';
  ms: number;
  pages: number;
  /** Why the cache was not used or not written, when it was not. */
  notes: string[];
  /** The index's size as its cache file counts it: what a pool of many indexes budgets by. */
  bytes: number;
}

/** Bump when extraction, tokenising or the engine's options change: old cache files are rebuilt. */
export const INDEX_CODE = 'extract/3;tokenize/1;compact/2;engine/5';
/** Pages larger than this are indexed by their first MAX_PAGE_READ bytes. */
export const MAX_PAGE_READ = 4 * 1024 * 1024;

export function indexKey(pages: BuildInput['pages']): string {
  const h = createHash('sha256').update(INDEX_CODE + '\n');
  for (const p of [...pages].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) h.update(`${p.path}\0${p.sha256}\n`);
  return h.digest('hex');
}

/**
 * A page's bytes, at most MAX_PAGE_READ of them; the buffer is sized by the file, not the bound.
 * A regular file of the version only: a symbolic link is not followed (it would lead out of the
 * store), and a FIFO or a device is refused from its type, never waited on. With `sha256` (the
 * manifest's digest) the whole file is hashed, and bytes that are not the imported page (rewritten,
 * a hard link to another file) are refused.
 */
export async function readBounded(file: string, sha256?: string): Promise<Buffer> {
  const opened = await openRegularFileIfExists(file, (why) => new Error(why), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  if (opened === null) throw new Error(describeFsError({ code: 'ENOENT' }));
  const { fh, size } = opened;
  try {
    const want = Math.min(size, MAX_PAGE_READ);
    const buf = Buffer.allocUnsafe(want);
    let n = 0;
    while (n < want) {
      const { bytesRead } = await fh.read(buf, n, want - n, n);
      if (bytesRead === 0) break; // shrank meanwhile
      n += bytesRead;
    }
    const page = n === want ? buf : buf.subarray(0, n);
    if (sha256 !== undefined) {
      // the whole file is hashed: the bytes past MAX_PAGE_READ too, in 1 MB chunks
      const h = createHash('sha256').update(page);
      const chunk = Buffer.allocUnsafe(Math.min(Math.max(size - n, 0), 1 << 20));
      for (let at = n; at < size;) {
        const { bytesRead } = await fh.read(chunk, 0, chunk.length, at);
        if (bytesRead === 0) break; // shrank meanwhile: the digest says so
        h.update(chunk.subarray(0, bytesRead));
        at += bytesRead;
      }
      if (h.digest('hex') !== sha256) throw new Error('is not the page the version was imported with (its digest differs)');
    }
    return page;
  } finally {
    await fh.close();
  }
}

/** Pages read ahead of the one being indexed: the reads wait on the disk while the CPU indexes. */
const READ_AHEAD = 16;

export async function loadOrBuild(input: BuildInput): Promise<{ index: SearchIndex; report: BuildReport }> {
  const t0 = performance.now();
  const notes: string[] = [];
  const key = indexKey(input.pages);
  if (input.cacheDir !== null) {
    try {
      const r = await readSearchCache(input.cacheDir, key);
      if (r?.ok) {
        const index = SearchIndex.deserialize(r.lines, new Set(input.pages.map((p) => p.path)));
        return { index, report: { from: 'cache', ms: performance.now() - t0, pages: index.pages.length, notes, bytes: sizeOf(r.lines) } };
      }
      if (r) notes.push(`cache file not used (${r.reason}); rebuilt`);
    } catch (err) {
      const why = typeof (err as NodeJS.ErrnoException).code === 'string' ? `it ${describeFsError(err)}` : err instanceof Error ? err.message : String(err);
      notes.push(`cache file not used (${why}); rebuilt`);
    }
  }
  // page by page, in order: read (READ_AHEAD pages ahead), extract, index, drop the text (never
  // more than READ_AHEAD pages' bytes at once)
  const index = SearchIndex.create();
  const read = (i: number) =>
    readBounded(join(input.siteDir, input.pages[i]!.path), input.pages[i]!.sha256).then(
      (b) => ({ b }),
      (err: unknown) => ({ err }),
    );
  const ahead: Array<ReturnType<typeof read>> = [];
  for (let i = 0; i < Math.min(READ_AHEAD, input.pages.length); i++) ahead.push(read(i));
  for (let i = 0; i < input.pages.length; i++) {
    const p = input.pages[i]!;
    const got = await ahead.shift()!;
    if (i + READ_AHEAD < input.pages.length) ahead.push(read(i + READ_AHEAD));
    try {
      if ('err' in got) throw got.err;
      index.add(p.path, extractPage(got.b));
    } catch (err) {
      notes.push(`${p.path}: not indexed (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  let bytes: number | null = null;
  if (input.cacheDir !== null) {
    try {
      bytes = await writeSearchCache(input.cacheDir, key, index.serializeLines());
    } catch (err) {
      // In words, not the raw errno and temp path (an immutable or read-only folder: the index is kept in memory).
      const why = typeof (err as NodeJS.ErrnoException).code === 'string' ? describeFsError(err, 'write') : err instanceof Error ? err.message : String(err);
      notes.push(`cache file not written (${why}); the index is kept in memory`);
    }
  }
  bytes ??= sizeOf(index.serializeLines());
  return { index, report: { from: 'built', ms: performance.now() - t0, pages: index.pages.length, notes, bytes } };
}

function sizeOf(lines: Iterable<string>): number {
  let n = 0;
  for (const l of lines) n += l.length + 1;
  return n;
}

/** The pages a version's search covers: its HTML files, except the export's 404 page. */
export function searchablePages<F extends { path: string }>(files: readonly F[]): F[] {
  return files.filter((f) => f.path.endsWith('.html') && f.path !== '404.html' && !f.path.split('/').some((s) => s.startsWith('.') || s === '_airlock'));
}
