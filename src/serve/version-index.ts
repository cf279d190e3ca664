import { join } from 'node:path';
import { buildRoutes, type Route } from './routes.js';
import { cacheControlFor, compressible, contentTypeFor } from './file-meta.js';
import { baseHeaders, repHeaders, type FlatHeaders } from './headers.js';
import type { Coding } from './encoding.js';
import type { FileRecord, VersionSource } from './source.js';

/**
 * The index of one loaded version: every URL form → a file entry with its representations and
 * precomputed headers. Built completely before it is swapped in, never mutated afterwards, and
 * captured once per request, so a response is always wholly from one version.
 */
export interface Rep {
  /** Absolute path of the bytes on disk (the site file, a variant, or a cached transformed page). */
  file: string;
  /** Digest to check when the bytes are read into memory: set for derived cache files only (the site's own files were checked at import). */
  verify: string | null;
  size: number;
  etag: string;
  coding: Coding;
  headers: FlatHeaders;
  notModified: FlatHeaders;
  ranged: FlatHeaders;
}

export interface FileEntry {
  path: string;
  sha256: string;
  lastModifiedSec: number;
  identity: Rep;
  br: Rep | null;
  gzip: Rep | null;
  has: { br: boolean; gzip: boolean };
}

export interface LoadedIndex {
  version: string;
  domain: string;
  importedAt: string;
  pageCount: number | null;
  fileCount: number;
  routes: Map<string, Route<FileEntry>>;
  /** The export's own 404.html, if it has one. */
  notFound: FileEntry | null;
  /** Headers every response from this version carries (version, security). */
  base: FlatHeaders;
}

/**
 * Replaces an HTML file's bytes once per version (src/features: scripts removed, flags injected);
 * may report the CSP hash sources of the inline code it kept, for a `csp` function.
 */
export type TransformOutput = Buffer | { html: Buffer; scriptHashes?: string[]; styleHashes?: string[] };
export type TransformHtml = (html: Buffer, path: string) => TransformOutput | Promise<TransformOutput>;
/** A transformed page as cached on disk (html-cache/): files, sizes and digests of each coding. */
export interface CachedFile { file: string; size: number; sha256: string }
export interface Replacement extends CachedFile { br?: CachedFile; gz?: CachedFile; scriptHashes: string[]; styleHashes: string[] }

/** A fixed policy, or one computed from the inline script/style hashes a page kept. */
export type CspSource = string | ((kept: { scriptHashes: string[]; styleHashes: string[] }) => string);
export interface IndexOptions { csp: CspSource; replacements?: Map<string, Replacement> }

/** RFC 9110 strong ETag from the content digest, suffixed per coding so representations differ (§8.8.3). */
function etagOf(sha256: string, coding: Coding): string {
  return `"${sha256.slice(0, 32)}${coding ? '-' + (coding === 'br' ? 'br' : 'gz') : ''}"`;
}

/**
 * Each transformed page gets the CSP of the inline code IT kept (a site-wide union would list
 * every page's scripts on every page, and grow with the site); everything else gets the policy
 * with no hashes. Policies and header bases are shared between pages with equal hash lists.
 */
function cspBases(label: string, csp: CspSource): (kept: { scriptHashes: string[]; styleHashes: string[] } | null) => FlatHeaders {
  const policy = (k: { scriptHashes: string[]; styleHashes: string[] }) => (typeof csp === 'string' ? csp : csp(k));
  const plain = baseHeaders({ version: label, csp: policy({ scriptHashes: [], styleHashes: [] }) });
  const memo = new Map<string, FlatHeaders>();
  return (kept) => {
    if (kept === null || typeof csp === 'string') return plain;
    const k = kept.scriptHashes.join(' ') + '|' + kept.styleHashes.join(' ');
    let b = memo.get(k);
    if (b === undefined) memo.set(k, (b = baseHeaders({ version: label, csp: policy(kept) })));
    return b;
  };
}

export function buildIndex(src: VersionSource, o: IndexOptions): LoadedIndex {
  const baseFor = cspBases(src.label, o.csp);
  const base = baseFor(null);
  const importedMs = Date.parse(src.importedAt);
  const lastModifiedSec = Math.floor((Number.isNaN(importedMs) ? Date.now() : importedMs) / 1000);
  const lastModified = new Date(lastModifiedSec * 1000).toUTCString();

  const entry = (f: FileRecord): FileEntry => {
    const repl = o.replacements?.get(f.path);
    const sha256 = repl?.sha256 ?? f.sha256;
    const contentType = contentTypeFor(f.path);
    const cacheControl = cacheControlFor(f.path, contentType);
    const fileBase = repl ? baseFor(repl) : base;
    const rep = (coding: Coding, c: { file: string; size: number }, verify: string | null, vary: boolean): Rep => {
      const etag = etagOf(sha256, coding);
      const h = repHeaders({ base: fileBase, contentType, cacheControl, lastModified, etag, size: c.size, coding, vary });
      return { file: c.file, verify, size: c.size, etag, coding, headers: h.ok, notModified: h.notModified, ranged: h.ranged };
    };
    if (repl) {
      const vary = compressible(contentType) || repl.br !== undefined || repl.gz !== undefined;
      const br = repl.br ? rep('br', repl.br, repl.br.sha256, vary) : null;
      const gzip = repl.gz ? rep('gzip', repl.gz, repl.gz.sha256, vary) : null;
      return { path: f.path, sha256, lastModifiedSec, identity: rep(null, repl, repl.sha256, vary), br, gzip, has: { br: br !== null, gzip: gzip !== null } };
    }
    const sizes = src.variants.get(f.sha256) ?? {};
    const vary = compressible(contentType) || sizes.br !== undefined || sizes.gz !== undefined;
    const variant = (enc: 'br' | 'gz', size: number | undefined) =>
      size !== undefined && src.variantPath ? { file: src.variantPath(f.sha256, enc), size } : null;
    const b = variant('br', sizes.br);
    const g = variant('gz', sizes.gz);
    const br = b ? rep('br', b, null, vary) : null;
    const gzip = g ? rep('gzip', g, null, vary) : null;
    const identity = rep(null, { file: join(src.siteDir, f.path), size: f.size }, null, vary);
    return { path: f.path, sha256, lastModifiedSec, identity, br, gzip, has: { br: br !== null, gzip: gzip !== null } };
  };

  const entries = src.files.map(entry);
  const routes = buildRoutes(entries);
  const nf = routes.get('/404.html');
  return {
    version: src.label,
    domain: src.domain,
    importedAt: src.importedAt,
    pageCount: src.pageCount,
    fileCount: src.files.length,
    routes,
    notFound: nf?.kind === 'file' ? nf.file : null,
    base,
  };
}
