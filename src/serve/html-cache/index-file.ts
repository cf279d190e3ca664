import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { atomicWriteFile } from '../../util/fsx.js';

/**
 * `<cache>/<key>/index.json`: for each original page digest, the transformed page's digest and
 * size, its br/gzip copies, and the CSP hash sources of the inline code it kept. Files sit beside
 * it as `<original sha256>.html|.html.br|.html.gz`. Written last and atomically, so an index only
 * ever lists files that were complete when it was written; the reader still checks them.
 */
const Sha = z.string().regex(/^[0-9a-f]{64}$/);
const Rep = z.object({ sha256: Sha, size: z.number().int().nonnegative() });
const CspSource = z.string().regex(/^'sha(256|384|512)-[A-Za-z0-9+/]+={0,2}'$/);
export const CachedPageSchema = Rep.extend({
  br: Rep.optional(),
  gz: Rep.optional(),
  scriptHashes: z.array(CspSource),
  styleHashes: z.array(CspSource),
});
export const HtmlCacheIndexSchema = z.object({ format: z.literal(1), key: z.string(), pages: z.record(Sha, CachedPageSchema) });
export type CachedPage = z.infer<typeof CachedPageSchema>;
export type CachedRep = z.infer<typeof Rep>;
export type CacheEncoding = 'html' | 'br' | 'gz';

export const INDEX_NAME = 'index.json';

/** Name of a cached file inside the key folder (pure; digests only, never a request path). */
export function cachedName(originalSha256: string, enc: CacheEncoding): string {
  return `${originalSha256}.html${enc === 'html' ? '' : '.' + enc}`;
}

/** The pages of a key folder's index; null when it is missing, unreadable or of another key/format. */
export async function readHtmlIndex(dir: string, key: string): Promise<Map<string, CachedPage> | null> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(join(dir, INDEX_NAME), 'utf8'));
  } catch {
    return null;
  }
  const parsed = HtmlCacheIndexSchema.safeParse(json);
  if (!parsed.success || parsed.data.key !== key) return null;
  return new Map(Object.entries(parsed.data.pages));
}

export async function writeHtmlIndex(dir: string, key: string, pages: Map<string, CachedPage>): Promise<void> {
  const sorted = Object.fromEntries([...pages].sort(([a], [b]) => (a < b ? -1 : 1)));
  await atomicWriteFile(join(dir, INDEX_NAME), JSON.stringify({ format: 1, key, pages: sorted }));
}
