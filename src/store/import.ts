import { mkdir, rename, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { MalformedError, StoreError, UsageError } from '../errors.js';
import { fsyncDir } from '../util/fsx.js';
import { VERSION_LABEL } from '../cli/args.js';
import type { ArchiveLimits } from '../archive/index.js';
import { readPackage, checkSignature } from '../package/index.js';
import { activateLocked } from './activate.js';
import { withLock } from './lock.js';
import { readMeta } from './meta.js';
import { storePaths, versionDir } from './paths.js';
import type { ProgressEvent } from './progress.js';
import { checkFreeSpace, requiredBytes } from './space.js';
import { cleanStaging, dropStaging, makeStaging } from './staging.js';
import { stageVersion } from './stage.js';
import { loadTrustedKeys } from './trust.js';

export interface ImportOptions {
  store: string;
  trust: KeyObject[];
  allowUnsigned?: boolean;
  activate?: boolean;
  onProgress?: (e: ProgressEvent) => void;
  limits?: Partial<ArchiveLimits>;
  lockTimeoutMs?: number;
}
export interface ImportResult { version: string; status: 'imported' | 'unchanged'; activated: boolean }

async function packageSize(pkg: string): Promise<number> {
  try {
    const s = await stat(pkg);
    if (!s.isFile()) throw new UsageError(`package ${pkg} is not a regular file`, { subject: pkg });
    return s.size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`package ${pkg} does not exist`, { subject: pkg });
    throw err;
  }
}

/**
 * Verify a package and add its version to the store, all or nothing (CONTRACT "Store
 * guarantees"): everything is built in S/staging/<id> and published by one rename into
 * S/versions/<label>; a failure or a kill before that rename leaves only staging garbage, which
 * the next locked command removes. Same label + same archive → no-op; different → refused.
 */
export async function importPackage(pkgPath: string, o: ImportOptions): Promise<ImportResult> {
  const pkg = resolve(pkgPath);
  const size = await packageSize(pkg);
  const { store, onProgress } = o;
  return withLock(store, async (lock) => {
    await cleanStaging(store);
    onProgress?.({ phase: 'verify', pkg });
    const layout = await readPackage(pkg);
    const trust = [...o.trust, ...(await loadTrustedKeys(store))];
    const { signer } = checkSignature(layout, { trust, allowUnsigned: o.allowUnsigned });
    const label = layout.manifest.version;
    // The label names a folder: re-check it here whatever the manifest schema allowed.
    if (!VERSION_LABEL.test(label)) throw new MalformedError('AIRLOCK_BAD_LABEL', `package ${pkg} has an invalid version label ${JSON.stringify(label)}`, { subject: 'airlock.json' });
    const finalDir = versionDir(store, label);
    const existing = await readMeta(finalDir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (existing) {
      if (existing.archive.sha256 !== layout.manifest.archive.sha256) {
        throw new StoreError('AIRLOCK_VERSION_CONFLICT', `version ${label} is already in the store with different content (archive sha256 ${existing.archive.sha256}, package has ${layout.manifest.archive.sha256}); choose another version label`, { subject: label });
      }
      if (o.activate) await activateLocked(store, label);
      return { version: label, status: 'unchanged' as const, activated: Boolean(o.activate) };
    }
    await checkFreeSpace(store, requiredBytes(size, layout.manifest.files.map((f) => f.size)));
    await mkdir(storePaths(store).versions, { recursive: true });
    const staging = await makeStaging(store);
    try {
      await stageVersion(staging, { pkg, pkgSize: size, layout, signer, limits: o.limits }, onProgress);
      await lock.assertHeld();
      await rename(staging, finalDir);
    } catch (err) {
      await dropStaging(staging, store);
      throw err;
    }
    await fsyncDir(storePaths(store).versions);
    await fsyncDir(storePaths(store).staging);
    onProgress?.({ phase: 'committed', version: label });
    if (o.activate) {
      await activateLocked(store, label);
      onProgress?.({ phase: 'activated', version: label });
    }
    await dropStaging(staging, store); // only removes S/staging when now empty
    return { version: label, status: 'imported' as const, activated: Boolean(o.activate) };
  }, { timeoutMs: o.lockTimeoutMs, onWait: (pid) => onProgress?.({ phase: 'lock-wait', pid }) });
}
