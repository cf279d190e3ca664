import { loadFromStore, siteSource, type SiteInput, type VersionSource } from './source.js';
import { buildIndex, type CspSource, type LoadedIndex } from './version-index.js';
import { cachedPages, type HtmlTransformSpec, type PagesOptions } from './html-pages.js';

export type { CspSource } from './version-index.js';
export interface IndexLoadOptions extends PagesOptions { csp: CspSource; html: HtmlTransformSpec | null }

/** Read a version (store or site folder), get its transformed HTML from the cache (built if missing), and index it. */
export async function loadIndex(from: { store: string; label: string } | { site: SiteInput }, o: IndexLoadOptions): Promise<LoadedIndex> {
  const src: VersionSource = 'site' in from ? siteSource(from.site) : await loadFromStore(from.store, from.label);
  const replacements = o.html ? await cachedPages(src, o.html, o) : undefined;
  return buildIndex(src, { csp: o.csp, replacements });
}
