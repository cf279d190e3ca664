import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { VERSION_LABEL } from '../cli/args.js';
import { readMeta } from './meta.js';
import { storePaths } from './paths.js';
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
}

/** Complete versions only (a folder appears in S/versions by rename, whole), newest import first. */
export async function listVersions(store: string): Promise<VersionInfo[]> {
  const state = await readState(store);
  const names = await readdir(storePaths(store).versions).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const out: VersionInfo[] = [];
  for (const name of names) {
    if (!VERSION_LABEL.test(name)) continue; // not a version (e.g. an editor's temp file)
    const meta = await readMeta(join(storePaths(store).versions, name));
    out.push({
      version: meta.label,
      domain: meta.domain,
      pageCount: meta.pageCount,
      fileCount: meta.fileCount,
      totalBytes: meta.totalBytes,
      importedAt: meta.importedAt,
      active: state.active === name,
      previous: state.previous === name,
    });
  }
  return out.sort((a, b) => b.importedAt.localeCompare(a.importedAt) || a.version.localeCompare(b.version));
}
