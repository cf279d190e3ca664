import { mkdir, rename, rmdir, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { AirlockError, EXIT, MalformedError, StoreError, UsageError } from '../errors.js';
import { fsyncDir } from '../util/fsx.js';
import type { ArchiveLimits } from '../archive/index.js';
import { VERSION_LABEL, readPackage, checkSignature, inputPath, type PackageInput, type PackageLayout } from '../package/index.js';
import { activateLocked } from './activate.js';
import { checkDeclared } from './declared.js';
import { checkSameVersion, existingMeta } from './existing.js';
import { createStore, existingAncestor, removeCreated, storeKind } from './location.js';
import { withLock, type StoreLock } from './lock.js';
import { storePaths, versionDir } from './paths.js';
import type { ProgressEvent } from './progress.js';
import { checkFreeSpace, requiredBytes } from './space.js';
import { cleanStaging, dropStaging, makeStaging } from './staging.js';
import { stageVersion } from './stage.js';
import { loadTrustedKeys } from './trust.js';
import { importDelta } from './delta-import.js';
import { isDeltaPackage } from '../package/delta/index.js';

export interface ImportOptions {
  store: string;
  trust: KeyObject[];
  allowUnsigned?: boolean;
  activate?: boolean;
  onProgress?: (e: ProgressEvent) => void;
  limits?: Partial<ArchiveLimits>;
  lockTimeoutMs?: number;
  /** Stops the import (SIGINT/SIGTERM): every write ends, staging is removed, the lock released. */
  signal?: AbortSignal;
}
export interface ImportResult { version: string; status: 'imported' | 'unchanged'; activated: boolean }

interface Checked { pkg: PackageInput; size: number; layout: PackageLayout; signer: string | null; label: string; needed: number }

async function packageSize(pkg: PackageInput): Promise<number> {
  if (typeof pkg !== 'string') return pkg.spans.reduce((n, s) => n + s.length, 0); // checked by openVolumes
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
 * guarantees"). First everything that needs no disk: the store path, the package's structure,
 * signature, label and what its manifest declares; only then is the store created (if missing)
 * and locked. The version is built in S/staging/<id> and published by one rename into
 * S/versions/<label>. A refusal, an error or a signal before that rename leaves the store as it
 * was: writes drained, staging removed, the folders this command created removed, lock released.
 * Same label + same archive → no-op (after checking the given file); different → refused.
 */
export async function importPackage(pkgPath: PackageInput, o: ImportOptions): Promise<ImportResult> {
  const pkg = typeof pkgPath === 'string' ? resolve(pkgPath) : pkgPath;
  const size = await packageSize(pkg);
  if (await isDeltaPackage(pkg)) return importDelta(pkg, o); // src/package/delta: rebuilt from a stored base
  const { store, signal } = o;
  const kind = await storeKind(store);
  o.onProgress?.({ phase: 'verify', pkg: inputPath(pkg) });
  const layout = await readPackage(pkg);
  const trust = [...o.trust, ...(await loadTrustedKeys(store))];
  const { signer } = checkSignature(layout, { trust, allowUnsigned: o.allowUnsigned });
  const label = layout.manifest.version;
  // The label names a folder: re-check it here whatever the manifest schema allowed.
  if (!VERSION_LABEL.test(label)) throw new MalformedError('AIRLOCK_BAD_LABEL', `package ${inputPath(pkg)} has an invalid version label ${JSON.stringify(label)}`, { subject: 'airlock.json' });
  checkDeclared(layout, o.limits);
  const c: Checked = { pkg, size, layout, signer, label, needed: requiredBytes(size, layout.manifest.files.map((f) => f.size)) };
  if (kind === 'missing') await checkFreeSpace(await existingAncestor(store), c.needed, store);
  let created: string[] = [];
  try {
    signal?.throwIfAborted();
    if (kind === 'missing') created = await createStore(store);
    return await withLock(store, (lock) => importLocked(c, o, lock),
      { timeoutMs: o.lockTimeoutMs, signal, onWait: (pid) => o.onProgress?.({ phase: 'lock-wait', pid }) });
  } catch (err) {
    await removeCreated(created); // only folders left empty: a store this command made goes away
    throw explain(err, store, label, signal);
  }
}

async function importLocked(c: Checked, o: ImportOptions, lock: StoreLock): Promise<ImportResult> {
  const { store, onProgress, signal } = o;
  await cleanStaging(store);
  const finalDir = versionDir(store, c.label);
  const existing = await existingMeta(finalDir);
  if (existing) {
    await checkSameVersion(c.pkg, c.layout, finalDir, existing, signal);
    if (o.activate) await activateLocked(store, c.label);
    return { version: c.label, status: 'unchanged', activated: Boolean(o.activate) };
  }
  await checkFreeSpace(store, c.needed);
  const { versions, staging: stagingRoot } = storePaths(store);
  const staging = await makeStaging(store);
  let madeVersions = false;
  try {
    await stageVersion(staging, { pkg: c.pkg, pkgSize: c.size, layout: c.layout, signer: c.signer, limits: o.limits, signal }, onProgress);
    signal?.throwIfAborted();
    await lock.assertHeld();
    madeVersions = await mkdir(versions).then(() => true, (err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') return false;
      throw err;
    });
    await rename(staging, finalDir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      throw new StoreError('AIRLOCK_BAD_VERSION', `${finalDir} exists but holds no complete version (no version.json); remove it and import again`, { subject: finalDir }, EXIT.USAGE);
    });
  } catch (err) {
    await dropStaging(staging, store);
    if (madeVersions) await rmdir(versions).catch(() => {}); // only if still empty
    throw err;
  }
  await fsyncDir(versions);
  await fsyncDir(stagingRoot);
  if (madeVersions) await fsyncDir(store);
  onProgress?.({ phase: 'committed', version: c.label });
  if (o.activate) {
    await activateLocked(store, c.label);
    onProgress?.({ phase: 'activated', version: c.label });
  }
  await dropStaging(staging, store); // only removes S/staging when now empty
  return { version: c.label, status: 'imported', activated: Boolean(o.activate) };
}

/** What the user is told: the signal that stopped us, or a full disk named as the store's. */
function explain(err: unknown, store: string, label: string, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) {
    const by = signal.reason instanceof AirlockError && typeof signal.reason.details.subject === 'string' ? signal.reason.details.subject : 'a signal';
    return new StoreError('AIRLOCK_INTERRUPTED', `import of version ${label} interrupted by ${by}; nothing was added to store ${store}`, { subject: by }, EXIT.FAILURE);
  }
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new StoreError('AIRLOCK_NO_SPACE', `no space left in store ${store} while importing version ${label} (${code}); nothing was added: free some space and import again`, { subject: store }, EXIT.FAILURE);
  }
  return err;
}
