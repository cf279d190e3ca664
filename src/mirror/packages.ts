import { storedPackage, type StoredPackage } from '../store/index.js';
import type { MirrorVersion } from './versions.js';

/**
 * The package file and sha256 the mirror hands out for a version. A version imported whole names
 * both in its version.json; one imported from a delta has its package built on first use
 * (src/store/rebuilt-package.ts), once per process at a time, and its digest remembered
 * (versions are immutable; the key has the import time, so a label imported again is new).
 */
const known = new Map<string, Promise<StoredPackage>>();
const MAX_KNOWN = 256;

export function packageOf(store: string, v: MirrorVersion): Promise<StoredPackage> {
  if (v.packageSha256 !== null) return Promise.resolve({ path: v.pkgPath, sha256: v.packageSha256 });
  const key = `${store}\n${v.label}\n${v.importedAt}`;
  let p = known.get(key);
  if (!p) {
    if (known.size >= MAX_KNOWN) known.delete(known.keys().next().value!);
    p = storedPackage(store, v.label);
    p.catch(() => known.delete(key)); // a failure is not remembered: the next request tries again
    known.set(key, p);
  }
  return p;
}
