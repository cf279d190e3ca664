import { access } from 'node:fs/promises';
import type { Manifest } from '../package/index.js';
import { requireVersion } from './activate.js';
import { readMeta, readStoredManifest, type VersionMeta } from './meta.js';
import { checkStoreFolder, storeFolderId } from './location.js';
import { StoreError } from '../errors.js';
import { siteFolders, storePaths, versionDir, versionPaths } from './paths.js';
import { inPool } from '../util/pool.js';
import { readVariantsIndex, type VariantEntry } from './variants/index-file.js';

export interface LoadedVersion {
  label: string;
  dir: string;
  siteDir: string;
  manifest: Manifest;
  meta: VersionMeta;
  /** versionFolders() when the version was read. */
  folders: string;
  /** Finished precompressed variants by content digest (sizes in bytes); files at variantPath(). */
  variants: Map<string, VariantEntry>;
  /** variants/index.json is published: precompression is complete (see list.ts). */
  precompressed: boolean;
  variantPath(sha256: string, enc: 'br' | 'gz'): string;
}

/**
 * Which folders a version's files are read from, as they are now: their inode numbers, one
 * string. The version's own folders only: one that is a link (into another store, or out of the
 * library) is refused, never read from or written into (serve prepares pages, variants and its
 * index there). A server compares this with what its version was loaded from, so a folder
 * replaced while served (by a link, or by another folder) is noticed, not read through.
 */
export async function versionFolders(store: string, label: string): Promise<string> {
  const p = versionPaths(versionDir(store, label));
  const ids = [await storeFolderId(store, storePaths(store).versions, "the store's versions"), await storeFolderId(store, p.dir, `version ${label}'s files`)];
  if (ids[1] === null) throw new StoreError('AIRLOCK_VERSION_NOT_FOUND', `version ${label} is no longer in its store`, { subject: p.dir });
  for (const [sub, holds] of [
    [p.site, 'pages'],
    [p.variants, 'compressed variants'],
    [p.vendor, 'vendored files'],
    [p.html, 'prepared pages'],
    [p.search, 'search index'],
  ] as const) {
    ids.push(await storeFolderId(store, sub, `version ${label}'s ${holds}`));
  }
  return ids.join(':');
}

/** Everything a server needs to index a version, read once (never from a request path). */
export async function loadVersion(store: string, label: string): Promise<LoadedVersion> {
  await requireVersion(store, label);
  const dir = versionDir(store, label);
  const p = versionPaths(dir);
  const folders = await versionFolders(store, label);
  const meta = await readMeta(dir);
  const manifest = await readStoredManifest(dir);
  // Every folder the manifest's files live in, too: a folder link inside site/ would serve another
  // folder's files as this version's pages (files are opened without following a final link; a
  // link higher up the path would be followed).
  await inPool(siteFolders(p.site, manifest.files).slice(1), (folder) => checkStoreFolder(store, folder, `version ${label}'s pages`));
  const variants = await readVariantsIndex(p.variantsIndex);
  const precompressed =
    variants.size > 0 ||
    (await access(p.variantsIndex).then(
      () => true,
      () => false,
    ));
  return {
    label,
    dir,
    siteDir: p.site,
    manifest,
    meta,
    folders,
    variants,
    precompressed,
    variantPath: (sha256, enc) => `${p.variants}/${sha256}.${enc}`,
  };
}
