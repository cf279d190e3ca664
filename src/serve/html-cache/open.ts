import { lstat, mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { EXIT, StoreError } from '../../errors.js';
import { join } from 'node:path';
import type { TransformContext } from '../../features/index.js';
import { fsyncDir } from '../../util/fsx.js';
import { readHtmlIndex, writeHtmlIndex } from './index-file.js';
import { cachedName, type CachedPage, type CachedRep, type CacheEncoding } from './cached.js';
import { buildPage, type PageJob, type PageTransform } from './page.js';
import { defaultPoolSize, PageWorkers } from './pool.js';
import { workerSlot } from './worker-slot.js';
import { errnoInWords } from '../../util/fs-words.js';

/** How pages are transformed: src/features options run on worker threads, or a function in-process. */
export type PageBuilder = { context: TransformContext } | { run: PageTransform };
export interface HtmlFile {
  path: string;
  /** What its build is named by: its digest, or a key derived from it (html-pages.ts). */
  sha256: string;
  /** The page's own digest (the manifest's), which its bytes are checked against before a build. */
  digest: string;
}
export interface OpenHtmlCache {
  dir: string;
  key: string;
  siteDir: string;
  files: readonly HtmlFile[];
  builder: PageBuilder;
  poolSize?: number;
  /** The pool to build on (shared by a server's versions); default: one of poolSize for this cache. */
  workers?: PageWorkers;
  /** Files above this size get their size checked at open (default 64 KiB: the server's streaming threshold). */
  statAbove?: number;
  /** Build only pages a request asks for until `release` (the background build waits). */
  held?: boolean;
}
export interface HtmlCache {
  dir: string;
  /** The pages ready now (grows as the background build proceeds). */
  pages: Map<string, CachedPage>;
  /** How many distinct pages were missing at open (built in the background). */
  missing: number;
  /** A page not ready yet, built ahead of the background queue. */
  page(sha256: string): Promise<CachedPage>;
  /** The background build ended and its index was published: pages built, pages that failed. */
  done: Promise<{ built: number; failed: string[] }>;
  /** Stop the background build (pages being built finish; their index is published). */
  stop(): Promise<void>;
  /** Let a held background build start (no-op otherwise). */
  release(): void;
}

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
    for (const [enc, rep] of [
      ['html', p],
      ['br', p.br],
      ['gz', p.gz],
    ] as const)
      if (rep && rep.size > statAbove) big.push([sha, enc, rep]);
  }
  await Promise.all(
    big.map(async ([sha, enc, rep]) => {
      const size = await stat(join(dir, cachedName(sha, enc))).then(
        (s) => s.size,
        () => -1,
      );
      if (size !== rep.size) good.delete(sha);
    }),
  );
  return good;
}

/** Throws EACCES/EPERM/EROFS when nothing can be written into `dir` (a store the server may only read). */
async function probeWritable(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  // A link here (into another store or anywhere) is never written through.
  if ((await lstat(dir)).isSymbolicLink())
    throw new StoreError(
      'AIRLOCK_STORE_PATH',
      `${dir} is a symbolic link, which is not followed (airlock keeps prepared pages there); move it out of the store`,
      { subject: dir },
      EXIT.USAGE,
    );
  const probe = join(dir, `.probe.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  await writeFile(probe, '', { flag: 'wx' });
  await rm(probe, { force: true });
}

/**
 * The transformed pages of one version under one key. Pages whose cached files are intact are
 * ready at once (no transform); the others are built in the background, on worker threads (or
 * in-process for a hook), and a page a request asks for first is built ahead of the rest
 * (`page`). When all are built, a new index is published (`done`). Pages are keyed by the
 * original's digest (`HtmlFile.sha256`, or a key the caller derives from it when the
 * transform also depends on the page's folder: see html-pages.ts).
 */
export async function openHtmlCache(o: OpenHtmlCache): Promise<HtmlCache> {
  const byDigest = new Map<string, HtmlFile>();
  for (const f of o.files) if (!byDigest.has(f.sha256)) byDigest.set(f.sha256, f);
  const wanted = [...byDigest.keys()];
  const index = (await readHtmlIndex(o.dir, o.key)) ?? new Map<string, CachedPage>();
  const good = await intact(o.dir, index, wanted, o.statAbove ?? 64 * 1024);
  const pages = new Map<string, CachedPage>();
  for (const sha of good) pages.set(sha, index.get(sha)!);
  const missing = wanted.filter((sha) => !good.has(sha));
  if (missing.length === 0) {
    return {
      dir: o.dir,
      pages,
      missing: 0,
      page: (sha) => Promise.reject(new Error(`no page ${sha}`)),
      done: Promise.resolve({ built: 0, failed: [] }),
      stop: async () => {},
      release: () => {},
    };
  }
  await probeWritable(o.dir);
  const b = o.builder;
  const queue =
    'context' in b
      ? (o.workers ?? new PageWorkers(o.poolSize ?? defaultPoolSize(), workerSlot)).queue(b.context)
      : new PageWorkers(4, () => ({ run: (job) => buildPage(job, b.run), end: async () => {} })).queue();
  if (o.held) queue.hold();
  const jobOf = (sha: string): PageJob => {
    const f = byDigest.get(sha)!;
    return { src: join(o.siteDir, ...f.path.split('/')), path: f.path, sha256: sha, dir: o.dir, digest: f.digest };
  };
  const inFlight = new Map<string, Promise<CachedPage>>();
  const failed: string[] = [];
  let stopped = false;
  const settle = (sha: string, p: Promise<CachedPage>) => {
    const tracked = p.then(
      (page) => {
        pages.set(sha, page);
        inFlight.delete(sha);
        return page;
      },
      (err: unknown) => {
        inFlight.delete(sha);
        throw err;
      },
    );
    inFlight.set(sha, tracked);
    return tracked;
  };
  const all = missing.map((sha) =>
    settle(sha, queue.submit(jobOf(sha), false)).then(
      () => true,
      (err: unknown) => {
        if (!stopped) failed.push(`${byDigest.get(sha)!.path}: ${errnoInWords(err instanceof Error ? err.message : String(err))}`);
        return false;
      },
    ),
  );
  const publish = async () => {
    await fsyncDir(o.dir); // the renames first, then the index that names them
    await writeHtmlIndex(o.dir, o.key, pages);
  };
  const done = Promise.all(all).then(async (ok) => {
    if (ok.some(Boolean)) await publish();
    return { built: ok.filter(Boolean).length, failed };
  });
  done.catch(() => {});
  return {
    dir: o.dir,
    pages,
    missing: missing.length,
    page: (sha) => {
      const ready = pages.get(sha);
      if (ready) return Promise.resolve(ready);
      if (!byDigest.has(sha)) return Promise.reject(new Error(`no page ${sha}`));
      const p = inFlight.get(sha);
      if (p && queue.hurry(sha)) return p;
      if (p) return p; // being built now
      return settle(sha, queue.submit(jobOf(sha), true)); // dropped by stop, or failed before: try again
    },
    done,
    stop: async () => {
      stopped = true;
      queue.drop('the background build was stopped'); // a request may still ask for a page: built then
      await done.catch(() => {});
    },
    release: () => queue.release(),
  };
}
