/**
 * The number of pages of a site, from its file list alone: every `.html` / `.htm` file except a
 * `404.html` (the service's pageCount counts the documentation's pages, not its error page).
 * Every manifest lists every file, so this is known wherever the file list is: pack writes it
 * into the manifest, import fills it into version.json when a manifest says null, and the
 * mirror answers it for such versions.
 */
export function countPages(files: ReadonlyArray<{ path?: unknown }>): number {
  let n = 0;
  for (const f of files) if (typeof f.path === 'string' && /\.html?$/i.test(f.path) && !/(^|\/)404\.html?$/i.test(f.path)) n++;
  return n;
}
