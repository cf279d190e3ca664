import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { AirlockError, StoreError } from '../errors.js';
import type { TransformContext } from '../features/index.js';
import { cacheKey, transformCodeDigest } from './html-cache/key.js';
import { siteAddress, type SiteAddress } from './site-address.js';
import { cachedName } from './html-cache/cached.js';
import { openHtmlCache, type HtmlCache, type PageBuilder } from './html-cache/open.js';
import type { PageWorkers } from './html-cache/pool.js';
import type { CachedPage } from './html-cache/cached.js';
import { vendorMap, type VersionSource } from './source.js';
import type { Replacement, TransformHtml } from './version-index.js';
import { describeFsError, errnoInWords } from '../util/fs-words.js';

/**
 * How served HTML is transformed, once per version (the deployment features), with the result cached on disk:
 * - `{ context }`: src/features' transform with these (structured-cloneable) options, run on
 *   worker threads; cached in the store under a key of the options and the transform's code, so
 *   `airlock import` can build it ahead and a restart loads it without transforming anything;
 * - `{ run, key }`: an in-process function; `key` must name everything its output depends on;
 *   without a key, the cache lives in the server's private scratch folder only.
 */
export type HtmlTransformSpec = { context: TransformContext } | { run: TransformHtml; key?: string };

export interface PagesOptions {
  /** A private folder removed when the server closes: previews, unkeyed hooks, read-only stores. */
  scratch: () => Promise<string>;
  log: (line: string) => void;
  poolSize?: number;
  /** The pool pages are built on (shared by every version a server prepares); default: one of poolSize for this cache. */
  workers?: PageWorkers;
  /** Cached files above this size are size-checked at load (they are streamed); see html-cache/open.ts. */
  statAbove?: number;
  /** Missing pages are built only on request until `release` (a starting server; see html-cache/pool.ts). */
  held?: boolean;
  /** Where the site was published (site-address.ts), when the caller has read it already. */
  address?: SiteAddress;
}

/** The cache key of a spec; null for an in-process hook without a key (never shared). */
export async function specKey(spec: HtmlTransformSpec): Promise<string | null> {
  if ('context' in spec) return cacheKey({ features: spec.context, code: await transformCodeDigest() });
  return spec.key === undefined ? null : cacheKey({ custom: spec.key });
}

const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * The transformed pages of a version: `ready` by path (from the cache), `later` by path for the
 * pages still being built (a request waits for its own page, built ahead of the others), `done`
 * once the background build has published its index, `stop` to end it (a version switch, close).
 */
export interface OpenedPages {
  ready: Map<string, Replacement>;
  later: Map<string, () => Promise<Replacement>>;
  key: string | null;
  missing: number;
  done: Promise<{ built: number; failed: string[] }>;
  stop: () => Promise<void>;
  release: () => void;
}

export async function openPages(src: VersionSource, given: HtmlTransformSpec, o: PagesOptions): Promise<OpenedPages> {
  // Per version, and so part of the context and of the cache key: vendoring (pages point at the
  // carried copies) and the site's own published origins (links to them become same-origin).
  let spec: HtmlTransformSpec = given;
  if ('context' in given) {
    const { origins } = o.address ?? (await siteAddress(src));
    spec = {
      context: {
        ...given.context,
        ...(src.vendor.length > 0 ? { vendorMap: vendorMap(src.vendor) } : {}),
        ...(origins.length > 0 ? { ownOrigins: origins } : {}),
      },
    };
  }
  const key = await specKey(spec);
  const builder: PageBuilder = 'context' in spec ? { context: spec.context } : { run: spec.run };
  const files = src.files.filter((f) => isTransformedPage(f.path)).map((f) => ({ path: f.path, sha256: buildKey(spec, f), digest: f.sha256 }));
  const open = async (root: string) =>
    openHtmlCache({
      dir: join(root, key ?? 'private'),
      key: key ?? 'private',
      siteDir: src.siteDir,
      files,
      builder,
      poolSize: o.poolSize,
      workers: o.workers,
      statAbove: o.statAbove,
      held: o.held,
    });
  const scratch = async () => open(join(await o.scratch(), src.label));
  let cache: HtmlCache;
  try {
    try {
      cache = key !== null && src.htmlCacheRoot !== null ? await open(src.htmlCacheRoot) : await scratch();
    } catch (err) {
      if (!NOT_WRITABLE.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
      o.log(`airlock serve: cannot write the HTML cache of ${src.label} in the store (${describeFsError(err, 'write')}); using a private folder`);
      cache = await scratch();
    }
  } catch (err) {
    if (err instanceof AirlockError) throw err;
    throw new StoreError('AIRLOCK_HTML_TRANSFORM', `cannot prepare the HTML of version ${src.label}: ${err instanceof Error ? err.message : String(err)}`, {
      subject: src.label,
    });
  }
  const dir = cache.dir + '/'; // + a digest-derived name: no join (and its normalising) per file
  const replacement = (sha: string, p: CachedPage): Replacement => {
    const at = (enc: 'html' | 'br' | 'gz') => dir + cachedName(sha, enc);
    return {
      file: at('html'),
      size: p.size,
      sha256: p.sha256,
      scriptHashes: p.scriptHashes,
      styleHashes: p.styleHashes,
      ...(p.br ? { br: { file: at('br'), ...p.br } } : {}),
      ...(p.gz ? { gz: { file: at('gz'), ...p.gz } } : {}),
    };
  };
  const ready = new Map<string, Replacement>();
  const later = new Map<string, () => Promise<Replacement>>();
  for (const f of files) {
    const p = cache.pages.get(f.sha256);
    if (p) ready.set(f.path, replacement(f.sha256, p));
    else later.set(f.path, () => cache.page(f.sha256).then((q) => replacement(f.sha256, q)));
  }
  if (cache.missing > 0) {
    o.log(`airlock serve: preparing ${cache.missing} HTML page(s) of ${src.label} in the background; a page asked for first is transformed first`);
    void cache.done.then(
      (r) => {
        o.log(
          `airlock serve: transformed ${r.built} HTML page(s) of ${src.label}` +
            (r.failed.length ? `; ${r.failed.length} failed (answered 500): ${r.failed.slice(0, 3).join('; ')}` : ''),
        );
      },
      // The version's folder went away under the build (a library's site removed): said, never a crash of the server.
      (err: unknown) => o.log(`airlock serve: preparing the HTML of ${src.label} stopped: ${errnoInWords(err instanceof Error ? err.message : String(err))}`),
    );
  }
  return { ready, later, key, missing: cache.missing, done: cache.done, stop: () => cache.stop(), release: () => cache.release() };
}

/**
 * What a page's cached build is named by: the original's digest, as the cache requires (a
 * transform depends on the bytes only), except where vendoring maps a site stylesheet's root
 * path: a relative reference then resolves against the page's folder, so the same bytes in
 * another folder are another build (a digest of the digest and the folder).
 */
function buildKey(spec: HtmlTransformSpec, f: { path: string; sha256: string }): string {
  const map = 'context' in spec ? spec.context.vendorMap : undefined;
  if (map === undefined || !Object.keys(map).some((k) => k.startsWith('/'))) return f.sha256;
  const folder = f.path.slice(0, f.path.lastIndexOf('/') + 1);
  return createHash('sha256').update(f.sha256).update('\0').update(folder).digest('hex');
}

/** The pages served transformed: every `.html` file (the rule the store's precompression follows too). */
export function isTransformedPage(path: string): boolean {
  return path.endsWith('.html');
}
