import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { TransformContext } from '../../features/index.js';
import { fsyncDir } from '../../util/fsx.js';
import { cachedName, readHtmlIndex, writeHtmlIndex, type CachedPage, type CachedRep, type CacheEncoding } from './index-file.js';
import { buildPage, type PageJob, type PageTransform } from './page.js';
import { defaultPoolSize, runPagePool } from './pool.js';

/** How pages are transformed: src/features options run on worker threads, or a function in-process. */
export type PageBuilder = { context: TransformContext } | { run: PageTransform };
export interface HtmlFile { path: string; sha256: string }
export interface OpenHtmlCache {
  dir: string; key: string; siteDir: string; files: readonly HtmlFile[]; builder: PageBuilder; poolSize?: number;
  /** Files above this size get their size checked at open (default 64 KiB: the server's streaming threshold). */
  statAbove?: number;
}
export interface HtmlCache { dir: string; pages: Map<string, CachedPage>; built: number }

/**
 * Index entries whose files are all there: one readdir for the folder, a stat only for files
 * above `statAbove` bytes (those are streamed, so their size must be right before the headers
 * go out). Smaller ones are read whole and checked against their digest before use
 * (BodyCache.load), so a torn one is refused then — statting 27,000 files would cost more than the
 * rest of a warm load together.
 */
async function intact(dir: string, index: Map<string, CachedPage>, wanted: readonly string[], statAbove: number): Promise<Set<string>> {
  const names = new Set(await readdir(dir).catch(() => [] as string[]));
  const present = (sha: string, enc: CacheEncoding, rep: CachedRep | undefined) => rep === undefined || names.has(cachedName(sha, enc));
  const good = new Set<string>();
  const big: Array<[string, CacheEncoding, CachedRep]> = [];
  for (const sha of wanted) {
    const p = index.get(sha);
    if (!p || !present(sha, 'html', p) || !present(sha, 'br', p.br) || !present(sha, 'gz', p.gz)) continue;
    good.add(sha);
    for (const [enc, rep] of [['html', p], ['br', p.br], ['gz', p.gz]] as const) if (rep && rep.size > statAbove) big.push([sha, enc, rep]);
  }
  await Promise.all(big.map(async ([sha, enc, rep]) => {
    const size = await stat(join(dir, cachedName(sha, enc))).then((s) => s.size, () => -1);
    if (size !== rep.size) good.delete(sha);
  }));
  return good;
}

/**
 * The transformed pages of one version under one key: read from the key folder's index when it
 * is complete and intact (no transform at all), otherwise the missing or damaged pages are built
 * (worker threads, or in-process) and a new index is published. Pages are keyed by the original's
 * digest: a transform must depend on the bytes only, not on the path.
 */
export async function openHtmlCache(o: OpenHtmlCache): Promise<HtmlCache> {
  const byDigest = new Map<string, HtmlFile>();
  for (const f of o.files) if (!byDigest.has(f.sha256)) byDigest.set(f.sha256, f);
  const wanted = [...byDigest.keys()];
  const index = (await readHtmlIndex(o.dir, o.key)) ?? new Map<string, CachedPage>();
  const good = await intact(o.dir, index, wanted, o.statAbove ?? 64 * 1024);
  const pages = new Map<string, CachedPage>();
  for (const sha of good) pages.set(sha, index.get(sha)!);
  const jobs: PageJob[] = wanted.filter((sha) => !good.has(sha)).map((sha) => {
    const f = byDigest.get(sha)!;
    return { src: join(o.siteDir, ...f.path.split('/')), path: f.path, sha256: sha, dir: o.dir };
  });
  if (jobs.length === 0) return { dir: o.dir, pages, built: 0 };
  await mkdir(o.dir, { recursive: true });
  const b = o.builder;
  if ('context' in b) {
    await runPagePool(jobs, b.context, o.poolSize ?? defaultPoolSize(), (job, page) => pages.set(job.sha256, page));
  } else {
    let next = 0;
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        pages.set(job.sha256, await buildPage(job, b.run).catch((err: unknown) => {
          throw new Error(`transforming ${job.path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        }));
      }
    }));
  }
  await fsyncDir(o.dir); // the renames first, then the index that names them
  await writeHtmlIndex(o.dir, o.key, pages);
  return { dir: o.dir, pages, built: jobs.length };
}
