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
  /** Absolute path of the bytes on disk, or null when `body` holds them (transformed HTML). */
  file: string | null;
  body: Buffer | null;
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
 * Replaces an HTML file's bytes once at load time (src/features: scripts removed, flags injected);
 * may report the CSP hash sources of the inline code it kept, for a `csp` function.
 */
export type TransformOutput = Buffer | { html: Buffer; scriptHashes?: string[]; styleHashes?: string[] };
export type TransformHtml = (html: Buffer, path: string) => TransformOutput | Promise<TransformOutput>;
/** In-memory bytes and variants for a transformed file. */
export interface Replacement { identity: Buffer; sha256: string; br?: Buffer; gzip?: Buffer }

export interface IndexOptions { csp: string; replacements?: Map<string, Replacement> }

/** RFC 9110 strong ETag from the content digest, suffixed per coding so representations differ (§8.8.3). */
function etagOf(sha256: string, coding: Coding): string {
  return `"${sha256.slice(0, 32)}${coding ? '-' + (coding === 'br' ? 'br' : 'gz') : ''}"`;
}

export function buildIndex(src: VersionSource, o: IndexOptions): LoadedIndex {
  const base = baseHeaders({ version: src.label, csp: o.csp });
  const importedMs = Date.parse(src.importedAt);
  const lastModifiedSec = Math.floor((Number.isNaN(importedMs) ? Date.now() : importedMs) / 1000);
  const lastModified = new Date(lastModifiedSec * 1000).toUTCString();

  const entry = (f: FileRecord): FileEntry & { path: string } => {
    const repl = o.replacements?.get(f.path);
    const sha256 = repl?.sha256 ?? f.sha256;
    const contentType = contentTypeFor(f.path);
    const cacheControl = cacheControlFor(f.path, contentType);
    const sizes = repl ? { br: repl.br?.length, gz: repl.gzip?.length } : src.variants.get(f.sha256) ?? {};
    const vary = compressible(contentType) || sizes.br !== undefined || sizes.gz !== undefined;
    const rep = (coding: Coding, size: number, file: string | null, body: Buffer | null): Rep => {
      const etag = etagOf(sha256, coding);
      const h = repHeaders({ base, contentType, cacheControl, lastModified, etag, size, coding, vary });
      return { file, body, size, etag, coding, headers: h.ok, notModified: h.notModified, ranged: h.ranged };
    };
    const variantFile = (enc: 'br' | 'gz') => (src.variantPath && !repl ? src.variantPath(f.sha256, enc) : null);
    const identity = rep(null, repl ? repl.identity.length : f.size, repl ? null : join(src.siteDir, f.path), repl?.identity ?? null);
    const br = sizes.br !== undefined ? rep('br', sizes.br, variantFile('br'), repl?.br ?? null) : null;
    const gzip = sizes.gz !== undefined ? rep('gzip', sizes.gz, variantFile('gz'), repl?.gzip ?? null) : null;
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
