import { mkdir, rename, rmdir, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { AirlockError, EXIT, MalformedError, SignatureError, StoreError, UsageError } from '../errors.js';
import { fsyncDir } from '../util/fsx.js';
import type { ArchiveLimits } from '../archive/index.js';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { VERSION_LABEL, readPackage, inputPath, type PackageInput, type PackageLayout } from '../package/index.js';
import { admitPackage, checkFreshness, recordSeen, type Admission } from './admit.js';
import { appendAudit, appendAuditLocked, auditWritable } from './audit.js';
import { readMeta } from './meta.js';
import { hasPolicy, loadPolicy } from './policy.js';
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
  /** Issue 14: import even when a freshness rule (downgrade, expiry, audience) refuses; audited. */
  allowDowngrade?: boolean;
}
export interface ImportResult { version: string; status: 'imported' | 'unchanged'; activated: boolean; signers?: string[]; overridden?: string[] }

interface Checked { pkg: PackageInput; size: number; layout: PackageLayout; signer: string | null; label: string; needed: number; admission: Admission; audited: boolean }

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
  const { store } = o;
  const kind = await storeKind(store);
  // Issue 14: a store with a trust policy records every import and every refusal in its audit log.
  const audited = kind === 'dir' && await hasPolicy(store);
  let layout: PackageLayout | null = null;
  try {
    if (await isDeltaPackage(pkg)) {
      if (audited) throw new SignatureError('AIRLOCK_DELTA_POLICY', `${inputPath(pkg)} is a delta package; a store with a trust policy imports full packages only (their signatures are checked against the policy)`, { subject: inputPath(pkg) });
      return await importDelta(pkg, o); // src/package/delta: rebuilt from a stored base
    }
    o.onProgress?.({ phase: 'verify', pkg: inputPath(pkg) });
    layout = await readPackage(pkg);
    return await importChecked(pkg, size, kind, layout, audited, o);
  } catch (err) {
    // A log that cannot take the line (it is itself broken: AIRLOCK_AUDIT_BROKEN) leaves the refusal unrecorded; the original error stands.
    if (audited && err instanceof AirlockError && err.exitCode === EXIT.VERIFICATION) await auditRefusal(store, pkg, layout, err).catch(() => {});
    throw err;
  }
}

/** A refusal goes into the audit log with its rule's code (the store is otherwise unchanged). */
async function auditRefusal(store: string, pkg: PackageInput, layout: PackageLayout | null, err: AirlockError): Promise<void> {
  await appendAudit(store, {
    command: 'import', outcome: 'refused', reason: err.code, package: inputPath(pkg), packageSha256: typeof pkg === 'string' ? await fileSha256(pkg).catch(() => null) : null,
    domain: layout?.manifest.domain ?? null, version: layout?.manifest.version ?? null, signers: (err.details.signers as string[] | undefined) ?? [], detail: err.message.slice(0, 2000),
  });
}

async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function importChecked(pkg: PackageInput, size: number, kind: 'dir' | 'missing', layout: PackageLayout, audited: boolean, o: ImportOptions): Promise<ImportResult> {
  const { store, signal } = o;
  const admission = await admitPackage(store, layout, { trust: o.trust, allowUnsigned: o.allowUnsigned, allowDowngrade: o.allowDowngrade });
  const signer = admission.signers[0] ?? null;
  const label = layout.manifest.version;
  // The label names a folder: re-check it here whatever the manifest schema allowed.
  if (!VERSION_LABEL.test(label)) throw new MalformedError('AIRLOCK_BAD_LABEL', `package ${inputPath(pkg)} has an invalid version label ${JSON.stringify(label)}`, { subject: 'airlock.json' });
  checkDeclared(layout, o.limits);
  const c: Checked = { pkg, size, layout, signer, label, needed: requiredBytes(size, layout.manifest.files.map((f) => f.size)), admission, audited };
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
  const policy = c.audited ? await loadPolicy(store) : null;
  if (c.audited) await auditWritable(store); // a broken audit log stops the import before anything is committed
  // Again under the lock: another import may have raised the domain's sequence meanwhile.
  if (policy) await checkFreshness(store, c.layout.manifest, policy, new Date(), Boolean(o.allowDowngrade));
  const existing = await existingMeta(finalDir);
  if (existing) {
    await checkSameVersion(c.pkg, c.layout, finalDir, existing, signal);
    if (o.activate) await activateLocked(store, c.label);
    if (c.audited) await auditImport(store, c, 'unchanged', existing.packageSha256);
    return { version: c.label, status: 'unchanged', activated: Boolean(o.activate), ...policyFields(c) };
  }
  await checkFreeSpace(store, c.needed);
  const { versions, staging: stagingRoot } = storePaths(store);
  const staging = await makeStaging(store);
  let madeVersions = false;
  try {
    await stageVersion(staging, { pkg: c.pkg, pkgSize: c.size, layout: c.layout, signer: c.signer, signers: c.admission.signers, limits: o.limits, signal }, onProgress);
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
  if (c.audited) {
    await recordSeen(store, c.layout.manifest);
    await auditImport(store, c, 'imported', (await readMeta(finalDir)).packageSha256);
  }
  onProgress?.({ phase: 'committed', version: c.label });
  if (o.activate) {
    await activateLocked(store, c.label);
    onProgress?.({ phase: 'activated', version: c.label });
  }
  await dropStaging(staging, store); // only removes S/staging when now empty
  return { version: c.label, status: 'imported', activated: Boolean(o.activate), ...policyFields(c) };
}

/** Who signed and which rule was overridden: reported by stores with a trust policy (the result is unchanged for others). */
function policyFields(c: Checked): Pick<ImportResult, 'signers' | 'overridden'> {
  return c.audited ? { signers: c.admission.signers, overridden: c.admission.overridden } : {};
}

async function auditImport(store: string, c: Checked, outcome: 'imported' | 'unchanged', packageSha256: string): Promise<void> {
  const a = c.admission;
  await appendAuditLocked(store, {
    command: 'import', outcome, reason: a.overridden.length ? 'AIRLOCK_ALLOW_DOWNGRADE' : null, package: inputPath(c.pkg), packageSha256,
    domain: c.layout.manifest.domain, version: c.label, signers: a.signers,
    detail: `policy ${a.policySerial}: ${a.signers.length} of ${a.need} signer(s) (${a.signerNames.join(', ')})` + (a.overridden.length ? `; --allow-downgrade overrode ${a.overridden.join(', ')}` : ''),
  });
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
