import { loadFromStore, siteSource, type SiteInput, type VersionSource } from './source.js';
import { buildIndex, type CspSource, type LoadedIndex } from './version-index.js';
import { isTransformedPage, openPages, type HtmlTransformSpec, type PagesOptions } from './html-pages.js';
import { variantsLater, type InTurn } from './variants-later.js';
import { basePathOf } from './base-path.js';
import { addBasePath } from './routes.js';
import { readRootPages, siteAddress, type RootPages, type SiteAddress } from './site-address.js';

export type { CspSource } from './version-index.js';
export interface IndexLoadOptions extends PagesOptions {
  csp: CspSource;
  html: HtmlTransformSpec | null;
  /** The site's sub-path as given (`serve --base-path`: segments, or null for the root only); undefined: detected. */
  basePath?: string | null;
  /** Runs the version's background precompression (variants-later.ts). */
  inTurn?: InTurn;
}

/**
 * Read a version (store or site folder), get its transformed HTML from the cache, and index it.
 * Pages missing from the cache do not hold the load: they are built in the background
 * (`preparing`), and a request for one waits for that page alone, never getting it untransformed.
 * Then, for a stored version, the assets without precompressed variants get them (variants-later.ts).
 */
export async function loadIndex(from: { store: string; label: string } | { site: SiteInput }, o: IndexLoadOptions): Promise<LoadedIndex> {
  const src: VersionSource = 'site' in from ? siteSource(from.site) : await loadFromStore(from.store, from.label);
  const root = await readRootPages(src);
  const address = await siteAddress(src, root);
  const pages = o.html ? await openPages(src, o.html, { ...o, address }) : null;
  const idx = buildIndex(src, { csp: o.csp, replacements: pages?.ready, later: pages?.later });
  const htmlPending = pages !== null && pages.missing > 0;
  const assets =
    'store' in from && !src.precompressed
      ? variantsLater({
          store: from.store,
          label: from.label,
          exclude: isTransformedPage,
          attach: idx.attach,
          log: o.log,
          poolSize: o.poolSize,
          inTurn: o.inTurn,
          after: htmlPending ? pages.done : Promise.resolve(),
          held: Boolean(o.held),
        })
      : null;
  if (htmlPending || assets) {
    idx.preparing = {
      pages: htmlPending ? pages.missing : 0,
      htmlDone: htmlPending ? pages.done : Promise.resolve(),
      done: handled(Promise.all([htmlPending ? pages.done : null, assets?.done])),
      stop: async () => {
        await Promise.all([htmlPending ? pages.stop() : null, assets?.stop()]);
      },
      release: () => {
        if (htmlPending) pages.release();
        assets?.release();
      },
    };
  }
  try {
    return withBasePath(src, idx, root, address, o);
  } catch (err) {
    await idx.preparing?.stop();
    throw err;
  }
}

function withBasePath(src: VersionSource, idx: LoadedIndex, root: RootPages, address: SiteAddress, o: IndexLoadOptions): LoadedIndex {
  // Before the index is swapped in (it never changes afterwards): a site built for a sub-path gets its aliases.
  const basePath = o.basePath !== undefined ? o.basePath : basePathOf(root, (p) => idx.routes.has(p), address.homePath);
  if (basePath !== null) {
    addBasePath(idx.routes, basePath);
    // Its error pages answer misses under the prefix too: the nearest 404.html up the path, as at the root.
    const prefix = '/' + basePath;
    const have = new Set(idx.notFound.map((nf) => nf.dir));
    const under = idx.notFound.filter((nf) => !have.has(prefix + nf.dir)).map((nf) => ({ dir: prefix + nf.dir, file: nf.file }));
    idx.notFound = [...idx.notFound, ...under].sort((a, b) => b.dir.length - a.dir.length);
    o.log(`airlock serve: ${src.label} is built for the sub-path /${basePath}/: served at / and at /${basePath}/`);
  }
  return idx;
}

/** A promise some may never await (a version switched away before its preparation ended): its failure is theirs to see, never an unhandled rejection. */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}
