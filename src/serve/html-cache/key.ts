import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Bump when the cache's file layout, index format or compression settings change. Changes of the
 * transform itself need no bump: the key includes a digest of src/features' code.
 */
export const HTML_CACHE_FORMAT = 1;

/** JSON with sorted keys, RegExps as `/src/flags`, undefined dropped: equal options, equal text. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof RegExp) return v.toString();
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}

/**
 * The cache folder name of one transform configuration: a short digest of everything that changes
 * the output besides the page bytes (deployment, flags, transform options, the transform's code).
 * 16 hex characters = 64 bits: collisions between a handful of configurations are not a concern.
 */
export function cacheKey(parts: unknown): string {
  return createHash('sha256')
    .update(stableStringify({ format: HTML_CACHE_FORMAT, parts }))
    .digest('hex')
    .slice(0, 16);
}

let codeDigest: Promise<string> | undefined;

/**
 * Digest of the code that transforms pages: src/features' modules (.js in dist, .ts under tsx)
 * and the rewriter's version, so an upgrade never serves pages cached by older rules (an analytics
 * tag the new table removes must not survive in a cached page).
 */
export function transformCodeDigest(): Promise<string> {
  codeDigest ??= (async () => {
    const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'features');
    const h = createHash('sha256');
    for (const name of (await readdir(dir)).filter((n) => /\.(js|ts)$/.test(n) && !n.endsWith('.d.ts')).sort()) {
      h.update(name)
        .update('\0')
        .update(await readFile(join(dir, name)))
        .update('\0');
    }
    const require = createRequire(import.meta.url);
    h.update((require('html-rewriter-wasm/package.json') as { version: string }).version);
    return h.digest('hex');
  })();
  return codeDigest;
}
