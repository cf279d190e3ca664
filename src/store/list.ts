import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readLeases } from './leases.js';
import { readMeta, readStoredManifestRaw, type VersionMeta } from './meta.js';
import { createHash } from 'node:crypto';
import { access } from 'node:fs/promises';
import { versionPaths } from './paths.js';
import { isLabel, storePaths } from './paths.js';
import { readState } from './state.js';

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
  const names = await readdir(storePaths(store).versions).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const leases = await readLeases(store);
  const out: VersionInfo[] = [];
  for (const name of names) {
    if (!isLabel(name)) continue; // not a version (e.g. an editor's temp file)
    const meta = await readMeta(join(storePaths(store).versions, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null; // no version.json: not a version
      throw err;
    });
    if (!meta) continue;
    out.push({
      version: meta.label,
      domain: meta.domain,
      pageCount: meta.pageCount,
      fileCount: meta.fileCount,
      totalBytes: meta.totalBytes,
      importedAt: meta.importedAt,
      active: state.active === name,
      previous: state.previous === name,
      servedBy: leases.filter((l) => l.version === name).map((l) => l.pid),
      manifestSha256: await manifestDigest(join(storePaths(store).versions, name)),
      precompressed: await access(versionPaths(join(storePaths(store).versions, name)).variantsIndex).then(() => true, () => false),
      fromDelta: deltaOf(meta),
    });
  }
  return out.sort((a, b) => b.importedAt.localeCompare(a.importedAt) || a.version.localeCompare(b.version));
}

/** sha256 of a version's airlock.json (bounded like every stored manifest), or null when it is unreadable. */
async function manifestDigest(dir: string): Promise<string | null> {
  const bytes = await readStoredManifestRaw(dir).catch(() => null);
  return bytes ? createHash('sha256').update(bytes).digest('hex') : null;
}

function deltaOf(meta: VersionMeta): VersionInfo['fromDelta'] {
  const d = (meta as Record<string, unknown>).delta as { base?: unknown; baseManifestSha256?: unknown } | undefined;
  return d && typeof d.base === 'string' && typeof d.baseManifestSha256 === 'string' ? { base: d.base, baseManifestSha256: d.baseManifestSha256 } : null;
}
