import { resolve } from 'node:path';
import { openVolumes, type VolumeSet } from '../package/volumes/index.js';
import { auditRefusal, importPackage } from './import.js';
import type { ImportOptions, ImportResult } from './add-version.js';
import { storeKind } from './location.js';
import { loadTrustedKeys } from './trust.js';

/**
 * Import a package split into volumes, read in place (read-only media, several folders): the set
 * is checked first — every volume present once, in order, of this package, matching the signed
 * table (trusted as the package is: --trust keys and STORE/trusted-keys) — naming any bad volume
 * before the store is touched; then importPackage reads the volumes' payloads as one stream.
 * A set refused (a volume missing, swapped, cut short, damaged…) is recorded in the store's audit
 * log as importPackage records a refused package.
 */
export async function importVolumes(
  given: string[],
  o: ImportOptions & { dirs?: string[]; onVolume?: (index: number, count: number, path: string) => void },
): Promise<ImportResult & { volumes: VolumeSet }> {
  const audited = (await storeKind(o.store)) === 'dir'; // as importPackage: a refusal never creates a store
  const trust = [...o.trust, ...(await loadTrustedKeys(o.store))];
  let set: VolumeSet;
  try {
    set = await openVolumes(given, { dirs: o.dirs, trust, allowUnsigned: o.allowUnsigned, signal: o.signal, onVolume: o.onVolume });
  } catch (err) {
    if (audited && given.length > 0) await auditRefusal(o.store, { path: resolve(given[0]!), spans: [] }, null, err, o);
    throw err;
  }
  return { ...(await importPackage(set.input, o)), volumes: set };
}
