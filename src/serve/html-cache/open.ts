import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { TransformContext } from '../../features/index.js';
import { fsyncDir } from '../../util/fsx.js';
import { cachedName, readHtmlIndex, writeHtmlIndex, type CachedPage } from './index-file.js';
import { buildPage, type PageJob, type PageTransform } from './page.js';
import { defaultPoolSize, runPagePool } from './pool.js';

/** How pages are transformed: src/features options run on worker threads, or a function in-process. */
export type PageBuilder = { context: TransformContext } | { run: PageTransform };
export interface HtmlFile { path: string; sha256: string }
export interface OpenHtmlCache { dir: string; key: string; siteDir: string; files: readonly HtmlFile[]; builder: PageBuilder; poolSize?: number }
export interface HtmlCache { dir: string; pages: Map<string, CachedPage>; built: number }

const STAT_CONCURRENCY = 32;

/** Index entries whose files are all present with the recorded sizes (a torn or lost file fails). */
async function intact(dir: string, index: Map<string, CachedPage>, wanted: readonly string[]): Promise<Set<string>> {
  const good = new Set<string>();
  let next = 0;
  const size = (name: string) => stat(join(dir, name)).then((s) => s.size, () => -1);
  const check = async (sha: string, p: CachedPage) => {
    const [h, b, g] = await Promise.all([size(cachedName(sha, 'html')), p.br ? size(cachedName(sha, 'br')) : 0, p.gz ? size(cachedName(sha, 'gz')) : 0]);
    return h === p.size && b === (p.br?.size ?? 0) && g === (p.gz?.size ?? 0);
  };
  await Promise.all(Array.from({ length: STAT_CONCURRENCY }, async () => {
    while (next < wanted.length) {
      const sha = wanted[next++]!;
      const p = index.get(sha);
      if (p && (await check(sha, p))) good.add(sha);
    }
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
  const good = await intact(o.dir, index, wanted);
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
