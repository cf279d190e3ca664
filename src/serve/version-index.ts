import { buildRoutes } from './routes.js';
import { cacheControlFor, compressible, contentTypeFor } from './file-meta.js';
import { baseHeaders, type FlatHeaders } from './headers.js';
import type { CspSource, FileEntry, IndexOptions, LoadedIndex, Replacement } from './version-types.js';
import { Rep, type FileMeta } from './rep.js';
import { vendorHref, type FileRecord, type VariantSizes, type VersionSource } from './source.js';
import { vendorContentType } from '../package/vendor.js';
import mime from 'mime-types';
import { isCompressibleType, MIN_VARIANT_SIZE } from '../store/variants/select.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

export { Rep } from './rep.js';
export type { CachedFile, CspSource, FileEntry, IndexOptions, LoadedIndex, Replacement, TransformHtml, TransformOutput } from './version-types.js';

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

  // Content type and cache policy depend on the name's extension only: computed once per extension.
  const byExt = new Map<string, { contentType: string; compressible: boolean; variants: boolean }>();
  const typeOf = (path: string) => {
    const ext = path
      .slice(path.lastIndexOf('/') + 1)
      .replace(/^[^.]*/, '')
      .toLowerCase();
    let t = byExt.get(ext);
    if (t === undefined) {
      const contentType = contentTypeFor(path);
      const type = mime.lookup(path);
      byExt.set(ext, (t = { contentType, compressible: compressible(contentType), variants: type !== false && isCompressibleType(type) }));
    }
    return t;
  };
  // Decided once, here: the files the variant build would compress (its own rule) but that have no
  // variant yet are compressed on request until they do (compress-now.ts). A published variant
  // index means the build is over: a file it left without variants did not shrink, and stays so.
  const onRequest = !src.precompressed || src.variantPath === null;
  // Manifest paths are normalised relative paths (src/archive): plain concatenation is exact.
  const siteDir = src.siteDir.endsWith('/') ? src.siteDir : src.siteDir + '/';

  const entry = (f: FileRecord, repl = o.replacements?.get(f.path)): FileEntry => {
    const pending = repl === undefined ? o.later?.get(f.path) : undefined;
    if (pending !== undefined) return lazyEntry(f, pending);
    const sha256 = repl?.sha256 ?? f.sha256;
    const t = typeOf(f.path);
    const sizes = repl ? { br: repl.br?.size, gz: repl.gz?.size } : (src.variants.get(f.sha256) ?? {});
    const dynamic = !repl && onRequest && t.variants && f.size >= MIN_VARIANT_SIZE && sizes.br === undefined && sizes.gz === undefined;
    const meta: FileMeta = {
      base: repl ? baseFor(repl) : base,
      contentType: t.contentType,
      cacheControl: cacheControlFor(f.path, t.contentType),
      lastModified,
      sha256,
      vary: t.compressible || dynamic || sizes.br !== undefined || sizes.gz !== undefined,
    };
    let identity: Rep;
    let br: Rep | null = null;
    let gzip: Rep | null = null;
    if (repl) {
      identity = new Rep(repl.file, repl.sha256, repl.size, null, meta);
      if (repl.br) br = new Rep(repl.br.file, repl.br.sha256, repl.br.size, 'br', meta);
      if (repl.gz) gzip = new Rep(repl.gz.file, repl.gz.sha256, repl.gz.size, 'gzip', meta);
    } else {
      identity = new Rep(siteDir + f.path, null, f.size, null, meta);
      if (src.variantPath && sizes.br !== undefined) br = new Rep(src.variantPath(f.sha256, 'br'), null, sizes.br, 'br', meta);
      if (src.variantPath && sizes.gz !== undefined) gzip = new Rep(src.variantPath(f.sha256, 'gz'), null, sizes.gz, 'gzip', meta);
      if (dynamic) {
        br = new Rep(identity.file, null, f.size, 'br', meta, true);
        gzip = new Rep(identity.file, null, f.size, 'gzip', meta, true);
      }
    }
    return { path: f.path, sha256, lastModifiedSec, identity, br, gzip, has: { br: br !== null, gzip: gzip !== null }, resolve: null };
  };
  // Fail closed: the placeholder reps name no file, so a path that forgot `resolve` answers 500.
  const lazyEntry = (f: FileRecord, pending: () => Promise<Replacement>): FileEntry => {
    const none = new Rep('', null, 0, null, { base, contentType: 'text/plain', cacheControl: 'no-store', lastModified, sha256: f.sha256, vary: false });
    let memo: Promise<FileEntry> | null = null;
    const e: FileEntry = {
      path: f.path,
      sha256: f.sha256,
      lastModifiedSec,
      identity: none,
      br: null,
      gzip: null,
      has: { br: false, gzip: false },
      resolve: null,
    };
    e.resolve = () =>
      (memo ??= pending().then(
        (repl) => {
          Object.assign(e, entry(f, repl), { resolve: null });
          return e;
        },
        (err: unknown) => {
          memo = null; // the next request tries again
          throw err;
        },
      ));
    return e;
  };

  const entries = src.files.map((f) => entry(f));
  const routes = buildRoutes(entries);
  let byDigest: Map<string, number[]> | null = null; // built on the first attach
  const attach = (sha256: string, sizes: VariantSizes) => {
    if (!src.variantPath) return;
    if (byDigest === null) {
      byDigest = new Map();
      src.files.forEach((f, i) => {
        if (o.replacements?.has(f.path) || o.later?.has(f.path)) return; // served transformed: its own codings
        const at = byDigest!.get(f.sha256);
        if (at) at.push(i);
        else byDigest!.set(f.sha256, [i]);
      });
    }
    src.variants.set(sha256, sizes);
    for (const i of byDigest.get(sha256) ?? []) Object.assign(entries[i]!, entry(src.files[i]!));
  };
  // Vendored third-party files, same origin, named by their digest: cached for good.
  for (const v of src.vendor) {
    const meta: FileMeta = { base, contentType: vendorContentType(v.path), cacheControl: IMMUTABLE, lastModified, sha256: v.sha256, vary: false };
    const identity = new Rep(v.file, null, v.size, null, meta);
    routes.set(vendorHref(v.path), {
      kind: 'file',
      file: { path: v.path, sha256: v.sha256, lastModifiedSec, identity, br: null, gzip: null, has: { br: false, gzip: false }, resolve: null },
    });
  }
  const notFound: Array<{ dir: string; file: FileEntry }> = [];
  for (const [path, r] of routes) {
    if (r.kind === 'file' && (path === '/404.html' || path.endsWith('/404.html'))) notFound.push({ dir: path.slice(0, -'404.html'.length), file: r.file });
  }
  notFound.sort((a, b) => b.dir.length - a.dir.length);
  return {
    version: src.label,
    domain: src.domain,
    importedAt: src.importedAt,
    pageCount: src.pageCount,
    fileCount: src.files.length,
    routes,
    notFound,
    base,
    source: src,
    preparing: null,
    attach,
  };
}

/**
 * The error page for a missed path: the `404.html` of the deepest folder above it that has one
 * (`/product/x` → `/product/404.html`, else `/404.html`), or null. Work per miss is bounded by the
 * number of error pages the export holds, not by the request path's length.
 */
export function notFoundPage(idx: LoadedIndex, path: string): FileEntry | null {
  for (const nf of idx.notFound) if (path.startsWith(nf.dir)) return nf.file;
  return null;
}
