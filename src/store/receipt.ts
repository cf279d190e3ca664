import { listVersions } from './list.js';
import { readStoredManifestBytes } from './meta.js';
import { versionDir, versionPaths } from './paths.js';
import { EXIT, StoreError } from '../errors.js';
import { readState } from './state.js';

/**
 * What the receiving side has, to travel back to the connected side so it picks the right delta
 * base: a small, unsigned JSON document. It carries no secret and grants nothing: a
 * wrong receipt only makes the next delta name a base the store lacks, which import refuses.
 */
export interface Receipt {
  format: 'airlock-receipt/1';
  createdAt: string;
  active: string | null;
  versions: { version: string; domain: string; manifestSha256: string; importedAt: string }[];
}

export async function makeReceipt(store: string, now = new Date()): Promise<Receipt> {
  const [versions, state] = await Promise.all([listVersions(store), readState(store)]);
  // The connected side picks a delta base by these digests: every manifest must read and parse. A
  // version whose manifest cannot (a link, a FIFO, too large, not a manifest) is not left out
  // quietly: reading it throws the refusal that names it (exit 2).
  for (const v of versions) {
    await readStoredManifestBytes(versionDir(store, v.version)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT' && err.code !== 'ENOTDIR') throw err;
      const path = versionPaths(versionDir(store, v.version)).manifest;
      throw new StoreError(
        'AIRLOCK_BAD_VERSION',
        `manifest ${path} is missing; the store file was damaged or edited by hand (restore it, or prune version ${v.version})`,
        { subject: path },
        EXIT.USAGE,
      );
    });
  }
  return {
    format: 'airlock-receipt/1',
    createdAt: now.toISOString(),
    active: state.active,
    versions: versions
      .filter((v) => v.manifestSha256 !== null)
      .map((v) => ({ version: v.version, domain: v.domain, manifestSha256: v.manifestSha256!, importedAt: v.importedAt })),
  };
}
