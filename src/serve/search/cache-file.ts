import { createHash, randomBytes } from 'node:crypto';
import { open, readFile, rename, rm, stat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The on-disk copy of a version's search index, `versions/<label>/search/index.json`: a header
 * line (format, key of what it was built from, size and sha256 of the body) and the body (the
 * index as SearchIndex.serialize wrote it). Written atomically (temp file, fsync, rename, fsync of
 * the folder), read with a size bound, and trusted only when the header names this format and
 * key and the body's digest matches: anything else is reported as damaged and rebuilt.
 */
export const SEARCH_CACHE_FORMAT = 'airlock-search-index/1';
export const SEARCH_CACHE_NAME = 'index.json';
/** A larger file is refused unread (a 10,000-page index is ~40 MB: bench/search.ts). */
export const MAX_SEARCH_CACHE_BYTES = 512 * 1024 * 1024;
const MAX_HEADER = 4096;

interface Header { format: string; key: string; size: number; sha256: string }

export type CacheRead = { ok: true; body: string } | { ok: false; reason: string };

export async function writeSearchCache(dir: string, key: string, body: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const data = Buffer.from(body, 'utf8');
  const header: Header = { format: SEARCH_CACHE_FORMAT, key, size: data.length, sha256: createHash('sha256').update(data).digest('hex') };
  const tmp = join(dir, `.${SEARCH_CACHE_NAME}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx');
  try {
    await fh.writeFile(JSON.stringify(header) + '\n');
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    await fh.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, join(dir, SEARCH_CACHE_NAME));
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  const d = await open(dir, 'r');
  try {
    await d.sync().catch(() => {}); // not every file system syncs folders
  } finally {
    await d.close();
  }
}

export async function readSearchCache(dir: string, key: string, max = MAX_SEARCH_CACHE_BYTES): Promise<CacheRead | null> {
  const file = join(dir, SEARCH_CACHE_NAME);
  let size: number;
  try {
    const st = await stat(file);
    if (!st.isFile()) return { ok: false, reason: 'not a regular file' };
    size = st.size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (size > max) return { ok: false, reason: `${size} bytes, more than the ${max} allowed` };
  const buf = await readFile(file);
  const nl = buf.indexOf(10);
  if (nl < 0 || nl > MAX_HEADER) return { ok: false, reason: 'no header line' };
  let h: Partial<Header>;
  try {
    h = JSON.parse(buf.subarray(0, nl).toString('utf8')) as Partial<Header>;
  } catch {
    return { ok: false, reason: 'header is not JSON' };
  }
  if (h === null || typeof h !== 'object' || h.format !== SEARCH_CACHE_FORMAT) return { ok: false, reason: `format ${JSON.stringify(h?.format)} is not ${SEARCH_CACHE_FORMAT}` };
  if (h.key !== key) return { ok: false, reason: 'built from other pages or by another build of airlock' };
  const body = buf.subarray(nl + 1);
  if (body.length !== h.size) return { ok: false, reason: `body is ${body.length} bytes, header says ${String(h.size)}` };
  if (createHash('sha256').update(body).digest('hex') !== h.sha256) return { ok: false, reason: 'body digest does not match its header' };
  return { ok: true, body: body.toString('utf8') };
}
