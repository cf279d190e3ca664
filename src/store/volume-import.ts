import { openVolumes, type VolumeSet } from '../package/volumes/index.js';
import { importPackage, type ImportOptions, type ImportResult } from './import.js';
import { loadTrustedKeys } from './trust.js';

/**
 * Import a package split into volumes, read in place (read-only media, several folders): the set
 * is checked first — every volume present once, in order, of this package, matching the signed
 * table (trusted as the package is: --trust keys and STORE/trusted-keys) — naming any bad volume
 * before the store is touched; then importPackage reads the volumes' payloads as one stream.
 */
export async function importVolumes(given: string[], o: ImportOptions & { dirs?: string[]; onVolume?: (index: number, count: number, path: string) => void }): Promise<ImportResult & { volumes: VolumeSet }> {
  const trust = [...o.trust, ...(await loadTrustedKeys(o.store))];
  const set = await openVolumes(given, { dirs: o.dirs, trust, allowUnsigned: o.allowUnsigned, signal: o.signal, onVolume: o.onVolume });
  return { ...(await importPackage(set.input, o)), volumes: set };
}
