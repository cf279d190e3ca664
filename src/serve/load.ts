import { loadFromStore, siteSource, type SiteInput, type VersionSource } from './source.js';
import { buildIndex, type LoadedIndex, type TransformHtml } from './version-index.js';
import { transformHtmlFiles } from './transform.js';

/** A fixed policy, or one computed from the inline script/style hashes the transform kept. */
export type CspSource = string | ((kept: { scriptHashes: string[]; styleHashes: string[] }) => string);
export interface IndexLoadOptions { csp: CspSource; transformHtml?: TransformHtml }

/** Read a version (store or site folder), transform its HTML if asked, and index it. */
export async function loadIndex(from: { store: string; label: string } | { site: SiteInput }, o: IndexLoadOptions): Promise<LoadedIndex> {
  const src: VersionSource = 'site' in from ? siteSource(from.site) : await loadFromStore(from.store, from.label);
  const t = o.transformHtml ? await transformHtmlFiles(src, o.transformHtml) : { replacements: undefined, scriptHashes: [], styleHashes: [] };
  const csp = typeof o.csp === 'string' ? o.csp : o.csp({ scriptHashes: t.scriptHashes, styleHashes: t.styleHashes });
  return buildIndex(src, { csp, replacements: t.replacements });
}
