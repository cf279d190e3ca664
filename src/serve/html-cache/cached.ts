/**
 * What one cached page is, and the names of its files inside a key folder. Its own module, free of
 * zod and of the index's reader: the transform workers (page.ts) import it, and a worker's cold
 * start is on the path of the first pages served after a switch (zod alone took 50-80 ms of a
 * worker's 120-160 ms start; see html-cache/pool.ts).
 */
export interface CachedRep {
  sha256: string;
  size: number;
}
export interface CachedPage extends CachedRep {
  br?: CachedRep;
  gz?: CachedRep;
  scriptHashes: string[];
  styleHashes: string[];
}
export type CacheEncoding = 'html' | 'br' | 'gz';

/** Name of a cached file inside the key folder (pure; digests only, never a request path). */
export function cachedName(originalSha256: string, enc: CacheEncoding): string {
  return `${originalSha256}.html${enc === 'html' ? '' : '.' + enc}`;
}
