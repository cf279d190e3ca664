import { versionNames } from './holdings.js';
import { join } from 'node:path';
import { readLeases } from './leases.js';
import { readMeta, readStoredManifestRaw, type VersionMeta } from './meta.js';
import { createHash } from 'node:crypto';
import { access } from 'node:fs/promises';
import { versionPaths } from './paths.js';
import { isLabel, storePaths } from './paths.js';
import { readState } from './state.js';
import { countPages } from '../package/pages.js';

export interface VersionInfo {
  version: string;
  domain: string;
  pageCount: number | null;
  fileCount: number;
  totalBytes: number;
  importedAt: string;
  active: boolean;
  previous: boolean;
  /** Pids of running servers that hold a lease on this version (prune keeps it). */
  servedBy: number[];
  /** sha256 of the version's exact airlock.json: what a delta names as its base. */
  manifestSha256: string | null;
  /**
   * Its text assets' br/gzip variants are published (variants/index.json); false while a server
   * (or `import --precompress`) has yet to build them, the assets being served uncompressed.
   */
  precompressed: boolean;
  /** The base a delta-imported version was rebuilt from, else null. */
  fromDelta: { base: string; baseManifestSha256: string } | null;
}

/**
 * Complete versions only (a folder appears in S/versions by rename, whole, with its
 * version.json), newest import first. Reads only: a store that does not exist has none.
 */
export async function listVersions(store: string): Promise<VersionInfo[]> {
  const state = await readState(store);
  const names = await versionNames(store);
  const leases = await readLeases(store);
  const out: VersionInfo[] = [];
  for (const name of names) {
    if (!isLabel(name)) continue; // not a version (e.g. an editor's temp file)
    const meta = await readMeta(join(storePaths(store).versions, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null; // no version.json: not a version
      throw err;
    });
    if (!meta) continue;
    // Bounded like every stored manifest; null when it is missing (then no digest, and no page count
    // to make up). One that is a link, a FIFO, a folder or too large is refused by name (exit 2).
    const manifest = await readStoredManifestRaw(join(storePaths(store).versions, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
      throw err;
    });
    out.push({
      version: meta.label,
      domain: meta.domain,
      pageCount: meta.pageCount ?? pagesOf(manifest),
      fileCount: meta.fileCount,
      totalBytes: meta.totalBytes,
      importedAt: meta.importedAt,
      active: state.active === name,
      previous: state.previous === name,
      servedBy: leases.filter((l) => l.version === name).map((l) => l.pid),
      manifestSha256: manifest && createHash('sha256').update(manifest).digest('hex'),
      precompressed: await access(versionPaths(join(storePaths(store).versions, name)).variantsIndex).then(
        () => true,
        () => false,
      ),
      fromDelta: deltaOf(meta),
    });
  }
  return out.sort((a, b) => b.importedAt.localeCompare(a.importedAt) || a.version.localeCompare(b.version));
}

/**
 * The page count of a version imported before import filled it in (version.json says null): the
 * stored manifest lists every file. Null only when that manifest cannot be read or parsed.
 */
function pagesOf(manifest: Buffer | null): number | null {
  if (!manifest) return null;
  try {
    const files = (JSON.parse(manifest.toString('utf8')) as { files?: unknown }).files;
    return Array.isArray(files) ? countPages(files as Array<{ path?: unknown }>) : null;
  } catch {
    return null;
  }
}

function deltaOf(meta: VersionMeta): VersionInfo['fromDelta'] {
  const d = (meta as Record<string, unknown>).delta as { base?: unknown; baseManifestSha256?: unknown } | undefined;
  return d && typeof d.base === 'string' && typeof d.baseManifestSha256 === 'string' ? { base: d.base, baseManifestSha256: d.baseManifestSha256 } : null;
}
