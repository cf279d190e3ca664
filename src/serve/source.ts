import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { loadVersion } from '../store/load.js';
import { versionPaths } from '../store/paths.js';
import { readState } from '../store/state.js';

/**
 * What the server needs of a version: from the store (src/store loadVersion, which validates
 * version.json, the manifest and variants/index.json), or from a bare site folder (preview).
 */
export interface FileRecord {
  path: string;
  size: number;
  sha256: string;
}
export interface VariantSizes {
  br?: number;
  gz?: number;
}
export interface VersionSource {
  label: string;
  domain: string;
  importedAt: string;
  /** A stored version: which folders it was read from (versionFolders), so a server notices one replaced; null for a site folder. */
  folders: string | null;
  /** A stored version's folder and where it really is (its path with every link resolved): reads stay inside it (read-check.ts). */
  root: { dir: string; real: string } | null;
  pageCount: number | null;
  siteDir: string;
  /** Path of a precompressed variant, or null when the source has none (preview). */
  variantPath: ((sha256: string, enc: 'br' | 'gz') => string) | null;
  /** Folder of the version's transformed-HTML caches (`versions/<label>/html`), or null (preview). */
  htmlCacheRoot: string | null;
  /** Folder of the version's local search index cache (`versions/<label>/search`), or null (preview). */
  searchCacheDir: string | null;
  files: FileRecord[];
  variants: Map<string, VariantSizes>;
  /** Its assets' variants are complete (a store's published index; a bare folder has nothing to do). */
  precompressed: boolean;
  /** Vendoring: the version's vendored third-party files (checked at import), served at `/_airlock/<path>`. */
  vendor: VendorFile[];
}
export interface VendorFile {
  path: string;
  file: string;
  size: number;
  sha256: string;
  urls: string[];
  site: string[];
}

/** Where a vendored file is served: same origin, under the reserved prefix. */
export const vendorHref = (path: string): string => `/_airlock/${path}`;

/**
 * The original references a page may use for each vendored file → its same-origin URL: each
 * https URL (and its protocol-relative form), and for a rewritten site stylesheet its root path.
 */
export function vendorMap(vendor: readonly VendorFile[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const v of vendor) {
    for (const u of v.urls) map[u] = vendorHref(v.path);
    for (const p of v.site) map['/' + p] = vendorHref(v.path);
  }
  return map;
}

/** The active version label of a store, or null. */
export async function readActive(store: string): Promise<string | null> {
  return (await readState(store)).active;
}

export async function loadFromStore(store: string, label: string): Promise<VersionSource> {
  const v = await loadVersion(store, label);
  return {
    label,
    domain: v.meta.domain,
    importedAt: v.meta.importedAt,
    folders: v.folders,
    root: { dir: v.dir, real: await realpath(v.dir) },
    pageCount: v.meta.pageCount ?? v.manifest.pageCount,
    siteDir: v.siteDir,
    variantPath: (sha, enc) => v.variantPath(sha, enc),
    htmlCacheRoot: versionPaths(v.dir).html,
    searchCacheDir: versionPaths(v.dir).search,
    files: v.manifest.files,
    variants: v.variants,
    precompressed: v.precompressed,
    vendor: (v.manifest.vendor ?? []).map((r) => ({
      path: r.path,
      file: join(v.dir, r.path),
      size: r.size,
      sha256: r.sha256,
      urls: r.urls,
      site: r.site ?? [],
    })),
  };
}

/** A site folder outside any store (preview): no variants, validators from the load time. */
export interface SiteInput {
  dir: string;
  files: FileRecord[];
  label?: string;
  domain?: string;
  importedAt?: string;
  pageCount?: number | null;
  /** A folder for the transformed-HTML cache that the caller owns and removes (preview's temp folder). */
  htmlCacheDir?: string;
}

export function siteSource(s: SiteInput): VersionSource {
  return {
    label: s.label ?? 'preview',
    domain: s.domain ?? '',
    importedAt: s.importedAt ?? new Date().toISOString(),
    folders: null,
    root: null,
    pageCount: s.pageCount ?? null,
    siteDir: s.dir,
    variantPath: null,
    htmlCacheRoot: s.htmlCacheDir ?? null,
    searchCacheDir: null,
    files: s.files,
    variants: new Map(),
    precompressed: true,
    vendor: [],
  };
}
