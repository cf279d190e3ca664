import { join } from 'node:path';
import { z } from 'zod';
import { atomicWriteFile, readRegularFile, refuseLinkedFolders } from '../../util/fsx.js';
import type { CachedPage, CachedRep } from './cached.js';

/**
 * `<cache>/<key>/index.json`: for each original page digest, the transformed page's digest and
 * size, its br/gzip copies, and the CSP hash sources of the inline code it kept. Files sit beside
 * it as `<original sha256>.html|.html.br|.html.gz`. Written last and atomically, so an index only
 * ever lists files that were complete when it was written; the reader still checks them.
 */
const Header = z.object({
  format: z.literal(1),
  key: z.string(),
  pages: z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v)),
});

const SHA = /^[0-9a-f]{64}$/;
// The hashes go into a Content-Security-Policy header: only well-formed hash sources, so a damaged
// or tampered index can never add a directive or a source ('unsafe-inline', an origin).
const CSP_HASH = /^'sha(256|384|512)-[A-Za-z0-9+/]+={0,2}'$/;

/**
 * Hand-written checks rather than a zod schema per entry: this runs over every page at each load
 * (9,000 entries: ~5 ms instead of ~120 ms). Anything malformed makes the entry absent (rebuilt).
 */
const isRep = (v: unknown): v is CachedRep => {
  const r = v as CachedRep;
  return typeof v === 'object' && v !== null && typeof r.sha256 === 'string' && SHA.test(r.sha256) && Number.isSafeInteger(r.size) && r.size >= 0;
};
function hashList(v: unknown, seen: Set<string>): v is string[] {
  if (!Array.isArray(v)) return false;
  for (const h of v) {
    if (typeof h !== 'string') return false;
    if (!seen.has(h)) {
      if (!CSP_HASH.test(h)) return false;
      seen.add(h); // pages share most hashes: test each distinct one once
    }
  }
  return true;
}
export function parsePage(v: unknown, seen: Set<string>): CachedPage | null {
  if (!isRep(v)) return null;
  const p = v as CachedPage;
  if ((p.br !== undefined && !isRep(p.br)) || (p.gz !== undefined && !isRep(p.gz))) return null;
  if (!hashList(p.scriptHashes, seen) || !hashList(p.styleHashes, seen)) return null;
  return {
    sha256: p.sha256,
    size: p.size,
    ...(p.br ? { br: { sha256: p.br.sha256, size: p.br.size } } : {}),
    ...(p.gz ? { gz: { sha256: p.gz.sha256, size: p.gz.size } } : {}),
    scriptHashes: p.scriptHashes,
    styleHashes: p.styleHashes,
  };
}

export const INDEX_NAME = 'index.json';
/** Far above any real index (~500 bytes a page: 130,000 pages); a bigger one is damaged (rebuilt). */
const INDEX_BYTES = 64 * 1024 * 1024;

/** The pages of a key folder's index; null when it is missing, unreadable or of another key/format. */
export async function readHtmlIndex(dir: string, key: string): Promise<Map<string, CachedPage> | null> {
  let json: unknown;
  try {
    refuseLinkedFolders(dir, 3); // its key folder, html/, the version's and versions/: never read through a link
    // A regular file only (a FIFO or a device there is never waited on), bounded before parsing.
    json = JSON.parse((await readRegularFile(join(dir, INDEX_NAME), { maxBytes: INDEX_BYTES, refuse: (why) => new Error(why) })).toString('utf8'));
  } catch {
    return null;
  }
  const parsed = Header.safeParse(json);
  if (!parsed.success || parsed.data.key !== key) return null;
  const seen = new Set<string>();
  const pages = new Map<string, CachedPage>();
  for (const [sha, v] of Object.entries(parsed.data.pages)) {
    const p = SHA.test(sha) ? parsePage(v, seen) : null;
    if (p) pages.set(sha, p);
  }
  return pages;
}

export async function writeHtmlIndex(dir: string, key: string, pages: Map<string, CachedPage>): Promise<void> {
  const sorted = Object.fromEntries([...pages].sort(([a], [b]) => (a < b ? -1 : 1)));
  refuseLinkedFolders(dir, 3); // nor written through one swapped in while the pages were built
  await atomicWriteFile(join(dir, INDEX_NAME), JSON.stringify({ format: 1, key, pages: sorted }));
}
