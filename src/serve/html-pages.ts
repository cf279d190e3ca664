import { join } from 'node:path';
import { AirlockError, StoreError } from '../errors.js';
import type { TransformContext } from '../features/index.js';
import { cacheKey, transformCodeDigest } from './html-cache/key.js';
import { cachedName } from './html-cache/index-file.js';
import { openHtmlCache, type HtmlCache, type PageBuilder } from './html-cache/open.js';
import type { VersionSource } from './source.js';
import type { Replacement, TransformHtml } from './version-index.js';

/**
 * How served HTML is transformed, once per version (issue 5), with the result cached on disk:
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
  /** Cached files above this size are size-checked at load (they are streamed); see html-cache/open.ts. */
  statAbove?: number;
}

/** The cache key of a spec; null for an in-process hook without a key (never shared). */
export async function specKey(spec: HtmlTransformSpec): Promise<string | null> {
  if ('context' in spec) return cacheKey({ features: spec.context, code: await transformCodeDigest() });
  return spec.key === undefined ? null : cacheKey({ custom: spec.key });
}

const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/** The transformed pages of a version by path, from its cache (built first where missing or damaged). */
export async function cachedPages(src: VersionSource, spec: HtmlTransformSpec, o: PagesOptions): Promise<Map<string, Replacement>> {
  return (await openPages(src, spec, o)).pages;
}

export async function openPages(src: VersionSource, spec: HtmlTransformSpec, o: PagesOptions): Promise<{ pages: Map<string, Replacement>; key: string | null; built: number }> {
  const key = await specKey(spec);
  const builder: PageBuilder = 'context' in spec ? { context: spec.context } : { run: spec.run };
  const files = src.files.filter((f) => f.path.endsWith('.html'));
  const open = async (root: string) => openHtmlCache({ dir: join(root, key ?? 'private'), key: key ?? 'private', siteDir: src.siteDir, files, builder, poolSize: o.poolSize, statAbove: o.statAbove });
  const scratch = async () => open(join(await o.scratch(), src.label));
  let cache: HtmlCache;
  try {
    try {
      cache = key !== null && src.htmlCacheRoot !== null ? await open(src.htmlCacheRoot) : await scratch();
    } catch (err) {
      if (!NOT_WRITABLE.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
      o.log(`airlock serve: cannot write the HTML cache of ${src.label} in the store (${(err as Error).message}); using a private folder`);
      cache = await scratch();
    }
  } catch (err) {
    if (err instanceof AirlockError) throw err;
    throw new StoreError('AIRLOCK_HTML_TRANSFORM', `cannot prepare the HTML of version ${src.label}: ${err instanceof Error ? err.message : String(err)}`, { subject: src.label });
  }
  if (cache.built > 0) o.log(`airlock serve: transformed ${cache.built} HTML page(s) of ${src.label}`);
  const out = new Map<string, Replacement>();
  const dir = cache.dir + '/'; // + a digest-derived name: no join (and its normalising) per file
  for (const f of files) {
    const p = cache.pages.get(f.sha256)!;
    const at = (enc: 'html' | 'br' | 'gz') => dir + cachedName(f.sha256, enc);
    out.set(f.path, {
      file: at('html'), size: p.size, sha256: p.sha256, scriptHashes: p.scriptHashes, styleHashes: p.styleHashes,
      ...(p.br ? { br: { file: at('br'), ...p.br } } : {}),
      ...(p.gz ? { gz: { file: at('gz'), ...p.gz } } : {}),
    });
  }
  return { pages: out, key, built: cache.built };
}
