import { loadFromStore, siteSource, type SiteInput, type VersionSource } from './source.js';
import { buildIndex, type LoadedIndex, type TransformHtml } from './version-index.js';
import { transformHtmlFiles } from './transform.js';

export interface IndexLoadOptions { csp: string; transformHtml?: TransformHtml }

/** Read a version (store or site folder), transform its HTML if asked, and index it. */
export async function loadIndex(from: { store: string; label: string } | { site: SiteInput }, o: IndexLoadOptions): Promise<LoadedIndex> {
  const src: VersionSource = 'site' in from ? siteSource(from.site) : await loadFromStore(from.store, from.label);
  const replacements = o.transformHtml ? await transformHtmlFiles(src, o.transformHtml) : undefined;
  return buildIndex(src, { csp: o.csp, replacements });
}
