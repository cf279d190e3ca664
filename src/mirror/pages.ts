import { dirname } from 'node:path';
import { countPages } from '../package/index.js';
import { readStoredManifestRaw } from '../store/index.js';
import type { MirrorVersion } from './versions.js';

/**
 * The `pageCount` the mirror answers: the API publishes an integer, so a version whose manifest
 * and version.json say `null` (imported by an older airlock) reports the number of HTML pages it
 * holds instead (countPages). Versions are immutable, so the count is computed once per
 * version and import time, from the version's own (verified at import) manifest.
 */
const cache = new Map<string, Promise<number>>();
const MAX_CACHED = 256;

export function pageCountOf(v: MirrorVersion): Promise<number> {
  if (typeof v.pageCount === 'number' && Number.isSafeInteger(v.pageCount) && v.pageCount >= 0) return Promise.resolve(v.pageCount);
  const key = `${v.label}\n${v.importedAt}`;
  let p = cache.get(key);
  if (!p) {
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    // An unreadable manifest (the version is being pruned) counts nothing rather than failing the answer.
    p = storedPages(dirname(v.pkgPath)).catch(() => 0);
    cache.set(key, p);
  }
  return p;
}

/** Read bounded, a regular file only, opened non-blocking: a FIFO or a device is refused (then 0), never waited on. */
async function storedPages(versionDir: string): Promise<number> {
  const m = JSON.parse((await readStoredManifestRaw(versionDir)).toString('utf8')) as { files?: unknown };
  return Array.isArray(m.files) ? countPages(m.files as Array<{ path?: unknown }>) : 0;
}
