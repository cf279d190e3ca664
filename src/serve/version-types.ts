import type { Route } from './routes.js';
import type { FlatHeaders } from './headers.js';
import type { Rep } from './rep.js';
import type { VariantSizes, VersionSource } from './source.js';

/**
 * The index of one loaded version: every URL form → a file entry with its representations and
 * their headers (built once, on first use). Built completely before it is swapped in, and
 * captured once per request, so a response is always wholly from one version. Afterwards only
 * two things change, each a whole-entry swap within one tick: a page still being transformed is
 * filled in, and an asset gains its precompressed variants once they are on disk (`attach`).
 */
export interface FileEntry {
  path: string;
  sha256: string;
  lastModifiedSec: number;
  identity: Rep;
  br: Rep | null;
  gzip: Rep | null;
  has: { br: boolean; gzip: boolean };
  /**
   * Set while the entry is a page still being transformed: its reps above must not be used (they
   * name no file); sendFile awaits this, which fills the entry in once (memoised) and clears it.
   */
  resolve: (() => Promise<FileEntry>) | null;
}

export interface LoadedIndex {
  version: string;
  domain: string;
  importedAt: string;
  pageCount: number | null;
  fileCount: number;
  routes: Map<string, Route<FileEntry>>;
  /**
   * The export's own error pages (`404.html` at the root and in any folder), deepest folder first:
   * a miss is answered by the nearest one up its path (notFoundPage).
   */
  notFound: ReadonlyArray<{ dir: string; file: FileEntry }>;
  /** Headers every response from this version carries (version, security). */
  base: FlatHeaders;
  /** Where it was loaded from (site folder, file list): for derived data such as the search index. */
  source: VersionSource;
  /** The background build of its transformed pages, when some were missing at load. */
  preparing: { pages: number; done: Promise<unknown>; htmlDone: Promise<unknown>; stop: () => Promise<void>; release: () => void } | null;
  /** Gives every untransformed file of this content its variants (sizes; files at source.variantPath). */
  attach: (sha256: string, sizes: VariantSizes) => void;
}

/**
 * Replaces an HTML file's bytes once per version (src/features: scripts removed, flags injected);
 * may report the CSP hash sources of the inline code it kept, for a `csp` function.
 */
export type TransformOutput = Buffer | { html: Buffer; scriptHashes?: string[]; styleHashes?: string[] };
export type TransformHtml = (html: Buffer, path: string) => TransformOutput | Promise<TransformOutput>;
/** A transformed page as cached on disk (html-cache/): files, sizes and digests of each coding. */
export interface CachedFile {
  file: string;
  size: number;
  sha256: string;
}
export interface Replacement extends CachedFile {
  br?: CachedFile;
  gz?: CachedFile;
  scriptHashes: string[];
  styleHashes: string[];
}

/** A fixed policy, or one computed from the inline script/style hashes a page kept. */
export type CspSource = string | ((kept: { scriptHashes: string[]; styleHashes: string[] }) => string);
export interface IndexOptions {
  csp: CspSource;
  replacements?: Map<string, Replacement>;
  /** Pages whose replacement is still being built, by path: served once it is there, never before. */
  later?: Map<string, () => Promise<Replacement>>;
}
