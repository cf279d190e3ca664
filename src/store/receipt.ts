import { listVersions } from './list.js';
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
  return {
    format: 'airlock-receipt/1',
    createdAt: now.toISOString(),
    active: state.active,
    versions: versions.filter((v) => v.manifestSha256 !== null).map((v) => ({ version: v.version, domain: v.domain, manifestSha256: v.manifestSha256!, importedAt: v.importedAt })),
  };
}
