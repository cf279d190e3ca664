import { createHash } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { rm, writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import { readRegularFile, readRegularFileSync, refuseLinkedFolders, tempSibling, type RegularFileRule } from '../../util/fsx.js';
import { cachedName, type CachedPage, type CachedRep, type CacheEncoding } from './cached.js';

import type { TransformHtml } from '../version-index.js';

const br = promisify(brotliCompress);
const gz = promisify(gzip);

/** What transforms one page (src/features transformHtmlDetailed, or a test hook). */
export type PageTransform = TransformHtml;

/** One page to build: its bytes at `src`, results under `dir` named by `sha256` (the original digest, or a key made from it). */
export interface PageJob {
  src: string;
  path: string;
  sha256: string;
  dir: string;
  /** The page's own digest: bytes that are not the imported page (rewritten, a hard link to another file) are refused. */
  digest: string;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** A page's source: a regular file of the version (a link is not followed: it would lead out of the store; a FIFO is never waited on). */
const SOURCE: RegularFileRule = { maxBytes: 256 * 1024 * 1024, noFollow: true, refuse: (why) => new Error(`the page ${why}`) };

/**
 * No fsync per file: the cache is derived data that can always be rebuilt. The rename keeps
 * readers from ever seeing half a file under the final name, the index is written (and synced)
 * only after every file of it exists, and the server checks sizes at load and digests on read, so
 * a file that a crash left empty or torn is rebuilt or refused, never served.
 */
async function put(dir: string, name: string, data: Buffer, blocking: boolean): Promise<CachedRep> {
  const final = join(dir, name);
  const tmp = tempSibling(final); // the temp name every durable write uses (own-temp.ts finds it)
  if (blocking) {
    writeFileSync(tmp, data, { flag: 'wx' });
    try {
      renameSync(tmp, final);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
  } else {
    await writeFile(tmp, data, { flag: 'wx' });
    await rename(tmp, final).catch(async (err: unknown) => {
      await rm(tmp, { force: true });
      throw err;
    });
  }
  return { sha256: sha(data), size: data.length };
}

const BR_PARAMS = (size: number) => ({
  params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: size, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
});

/**
 * Transform one page and write it with its br/gzip copies (each kept only when smaller). Brotli
 * quality 5 and gzip 6: near the best ratio for HTML at a fraction of q11's time; these run for
 * every page of a version, on import or at first load.
 * `blocking` (a transform worker, which builds one page at a time on its own thread): read,
 * compress and write synchronously. The async forms queue on the process's 4-thread libuv pool,
 * which every worker and the server share: a page a reader waits for then queued behind the
 * background build's compressions and writes.
 */
export async function buildPage(job: PageJob, transform: PageTransform, o: { blocking?: boolean } = {}): Promise<CachedPage> {
  const blocking = o.blocking === true;
  const bytes = blocking ? readRegularFileSync(job.src, SOURCE) : await readRegularFile(job.src, SOURCE);
  if (sha(bytes) !== job.digest) throw new Error('the page is not the one the version was imported with (its digest differs)');
  const out = await transform(bytes, job.path);
  const html = Buffer.isBuffer(out) ? out : out.html;
  const hashes: { scriptHashes?: string[]; styleHashes?: string[] } = Buffer.isBuffer(out) ? {} : out;
  const name = (enc: CacheEncoding) => cachedName(job.sha256, enc);
  const [b, g] = blocking
    ? [brotliCompressSync(html, BR_PARAMS(html.length)), gzipSync(html, { level: 6 })]
    : await Promise.all([br(html, BR_PARAMS(html.length)), gz(html, { level: 6 })]);
  // Its folder, the cache's, the version's and versions/ are their own: a link swapped in meanwhile is never written through.
  refuseLinkedFolders(job.dir, 3);
  const page: CachedPage = {
    ...(await put(job.dir, name('html'), html, blocking)),
    scriptHashes: [...(hashes.scriptHashes ?? [])],
    styleHashes: [...(hashes.styleHashes ?? [])],
  };
  if (b.length < html.length) page.br = await put(job.dir, name('br'), b, blocking);
  if (g.length < html.length) page.gz = await put(job.dir, name('gz'), g, blocking);
  return page;
}
