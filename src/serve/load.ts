import { loadFromStore, siteSource, type SiteInput, type VersionSource } from './source.js';
import { buildIndex, type CspSource, type LoadedIndex } from './version-index.js';
import { cachedPages, type HtmlTransformSpec, type PagesOptions } from './html-pages.js';
import { basePathOf } from './base-path.js';
import { addBasePath } from './routes.js';

export type { CspSource } from './version-index.js';
export interface IndexLoadOptions extends PagesOptions { csp: CspSource; html: HtmlTransformSpec | null }

/** Read a version (store or site folder), get its transformed HTML from the cache (built if missing), and index it. */
export async function loadIndex(from: { store: string; label: string } | { site: SiteInput }, o: IndexLoadOptions): Promise<LoadedIndex> {
  const src: VersionSource = 'site' in from ? siteSource(from.site) : await loadFromStore(from.store, from.label);
  const replacements = o.html ? await cachedPages(src, o.html, o) : undefined;
  const idx = buildIndex(src, { csp: o.csp, replacements });
  // Before the index is swapped in (it never changes afterwards): a site built for a sub-path gets its aliases.
  const basePath = await basePathOf(src, (p) => idx.routes.has(p));
  if (basePath !== null) {
    addBasePath(idx.routes, basePath);
    o.log(`airlock serve: ${src.label} is built for the sub-path /${basePath}/: served at / and at /${basePath}/`);
  }
  return idx;
}
