import { SETTLED_UNDER_LOCK } from './settle.js';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { AirlockError, EXIT, MalformedError, StoreError, UsageError } from '../errors.js';
import { fileSha256 } from '../util/fsx.js';
import { VERSION_LABEL, readPackage, inputPath, type PackageInput, type PackageLayout } from '../package/index.js';
import { admitPackage, checkFreshness, type Admission } from './admit.js';
import { appendAudit } from './audit/append.js';
import { loadPolicy } from './policy.js';
import { addVersion, beginLocked, importEvent, keepExisting, type ImportOptions, type ImportResult } from './add-version.js';
import { checkDeclared } from './declared.js';
import { checkSameVersion, existingMeta } from './existing.js';
import { createStore, existingAncestor, removeCreated, storeKind } from './location.js';
import { withLock, type StoreLock } from './lock.js';
import { versionDir } from './paths.js';
import { checkFreeSpace, requiredBytes } from './space.js';
import { stageVersion } from './stage.js';
import { importDelta } from './delta-import.js';
import { notALibrary } from './library.js';
import { isDeltaPackage } from '../delta/index.js';

export type { ImportOptions, ImportResult } from './add-version.js';

interface Checked {
  pkg: PackageInput;
  size: number;
  layout: PackageLayout;
  signer: string | null;
  label: string;
  needed: number;
  admission: Admission;
}

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
 * Verify a package and add its version to the store, all or nothing (the store
 * guarantees). First everything that needs no disk: the store path, the package's structure,
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
  if (kind === 'dir') await notALibrary(store); // before anything is written, a refusal's audit line included
  let layout: PackageLayout | null = null;
  const delta: { domain?: string; version?: string } = {};
  try {
    if (await isDeltaPackage(pkg)) return await importDelta(pkg, o, delta); // src/delta: rebuilt from a stored base, admitted as its target
    o.onProgress?.({ phase: 'verify', pkg: inputPath(pkg) });
    layout = await readPackage(pkg);
    return await importChecked(pkg, size, kind, layout, o);
  } catch (err) {
    // Every store records every refusal in its audit log. A store that does not exist is not
    // created by a refusal (that refusal has no log to go to); one that came to exist meanwhile
    // (another import made it while this one was checked) gets the line like any other.
    if (kind === 'dir' || (await storeKind(store).catch(() => null)) === 'dir') await auditRefusal(store, pkg, layout?.manifest ?? delta, err, o);
    throw err;
  }
}

/** The package was refused for what it is (exit 4, or a label taken by other content), not a usage or I/O failure. */
function isRefusal(err: unknown): err is AirlockError {
  return err instanceof AirlockError && (err.exitCode === EXIT.VERIFICATION || err.code === 'AIRLOCK_VERSION_CONFLICT');
}

/**
 * A refusal goes into the store's audit log with its rule's code (the store is otherwise
 * unchanged); any other error adds nothing. The one place every refused import is recorded:
 * importPackage's, and importVolumes' for a set of volumes refused before its package is read
 * (`pkg` then names the first volume given, with no spans: no sha256 is recorded for it).
 * A log that cannot take the line (it is itself broken: AIRLOCK_AUDIT_BROKEN) leaves the
 * refusal unrecorded; the caller's error stands.
 */
export async function auditRefusal(
  store: string,
  pkg: PackageInput,
  m: { domain?: string; version?: string } | null,
  err: unknown,
  o: Pick<ImportOptions, 'lockTimeoutMs' | 'signal'>,
): Promise<void> {
  if (!isRefusal(err)) return;
  await appendAudit(
    store,
    {
      command: 'import',
      outcome: 'refused',
      reason: err.code,
      package: inputPath(pkg),
      packageSha256: await refusedSha256(pkg),
      domain: m?.domain ?? null,
      version: m?.version ?? null,
      signers: (err.details.signers as string[] | undefined) ?? [],
      detail: err.message.slice(0, 2000),
    },
    { timeoutMs: o.lockTimeoutMs, signal: o.signal },
  ).catch(() => {});
}

/**
 * The refused package's sha256 is kept for a package of at most this size, else null. Most
 * refusals come from the package's head (its members, manifest, signature, freshness) and cost
 * a few reads; hashing the whole file would then be the refusal's whole cost and grow with the
 * file: a 1.5 GB file of zeros took 18 s to refuse, against 1.5 s for verify. Up to 16 MiB the
 * hash costs ~50 ms, a small part of the refusal; above it the line still names the package
 * (path, and domain, version and signers when its manifest was read) and the rule that refused it.
 */
export const REFUSED_SHA256_MAX_BYTES = 16 * 1024 * 1024;

async function refusedSha256(pkg: PackageInput): Promise<string | null> {
  if (typeof pkg !== 'string') return null; // volumes: no one file to name by digest
  const size = await stat(pkg).then(
    (s) => (s.isFile() ? s.size : null),
    () => null,
  );
  if (size === null || size > REFUSED_SHA256_MAX_BYTES) return null;
  return fileSha256(pkg).catch(() => null);
}

async function importChecked(pkg: PackageInput, size: number, kind: 'dir' | 'missing', layout: PackageLayout, o: ImportOptions): Promise<ImportResult> {
  const { store, signal } = o;
  const admit = () => admitPackage(store, layout, { trust: o.trust, allowUnsigned: o.allowUnsigned, allowDowngrade: o.allowDowngrade });
  // Before the lock, to refuse early. Another command holding the lock may be half-way through
  // its change (the audit line written, not yet its head; the import logged, trust/seen.json not
  // yet written; a policy entering the chain): what looks like a damaged store then is decided
  // under the lock, where a store damaged indeed is refused as always.
  const early = await admit().catch((err: unknown) => {
    if (err instanceof AirlockError && SETTLED_UNDER_LOCK.has(err.code)) return null;
    throw err;
  });
  const label = layout.manifest.version;
  // The label names a folder: re-check it here whatever the manifest schema allowed.
  if (!VERSION_LABEL.test(label))
    throw new MalformedError('AIRLOCK_BAD_LABEL', `package ${inputPath(pkg)} has an invalid version label ${JSON.stringify(label)}`, {
      subject: 'airlock.json',
    });
  checkDeclared(layout, o.limits);
  const c: Omit<Checked, 'admission'> & { admission: Admission | null } = {
    pkg,
    size,
    layout,
    signer: early?.signers[0] ?? null,
    label,
    needed: requiredBytes(
      size,
      layout.manifest.files.map((f) => f.size),
    ),
    admission: early,
  };
  if (kind === 'missing') await checkFreeSpace(await existingAncestor(store), c.needed, store);
  let created: string[] = [];
  try {
    signal?.throwIfAborted();
    if (kind === 'missing') created = await createStore(store);
    return await withLock(
      store,
      async (lock) => {
        let admission = c.admission;
        if (admission === null) {
          await beginLocked(o); // a log broken indeed is refused here, as always
          admission = await admit();
        }
        return importLocked({ ...c, admission, signer: admission.signers[0] ?? null }, o, lock);
      },
      {
        timeoutMs: o.lockTimeoutMs,
        signal,
        onWait: (pid) => o.onProgress?.({ phase: 'lock-wait', pid }),
      },
    );
  } catch (err) {
    await removeCreated(created); // only folders left empty: a store this command made goes away
    throw explain(err, store, label, signal);
  }
}

async function importLocked(c: Checked, o: ImportOptions, lock: StoreLock): Promise<ImportResult> {
  const { store, onProgress, signal } = o;
  const history = await beginLocked(o);
  const finalDir = versionDir(store, c.label);
  const policy = await loadPolicy(store);
  // Again under the lock: another import may have raised the domain's sequence meanwhile.
  await checkFreshness(store, c.layout.manifest, policy?.policy.identity ?? null, new Date(), o.allowDowngrade ?? false, c.layout.manifestBytes, history);
  const existing = await existingMeta(finalDir);
  if (existing) {
    await checkSameVersion(c.pkg, c.layout, finalDir, existing, signal);
    return keepExisting(o, c.label, event(c, 'unchanged', existing.packageSha256), c.admission, c.layout.manifest);
  }
  await checkFreeSpace(store, c.needed);
  return addVersion(o, lock, c.label, async (staging) => {
    const meta = await stageVersion(
      staging,
      { pkg: c.pkg, pkgSize: c.size, layout: c.layout, signer: c.signer, signers: c.admission.signers, limits: o.limits, signal },
      onProgress,
    );
    return { audit: event(c, 'imported', meta.packageSha256), seen: c.layout.manifest, admission: c.admission };
  });
}

function event(c: Checked, outcome: 'imported' | 'unchanged', packageSha256: string | null) {
  return importEvent({ package: inputPath(c.pkg), packageSha256, domain: c.layout.manifest.domain, version: c.label, admission: c.admission, outcome });
}

/** What the user is told: the signal that stopped us, or a full disk named as the store's. */
function explain(err: unknown, store: string, label: string, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) {
    const by = signal.reason instanceof AirlockError && typeof signal.reason.details.subject === 'string' ? signal.reason.details.subject : 'a signal';
    return new StoreError(
      'AIRLOCK_INTERRUPTED',
      `import of version ${label} interrupted by ${by}; nothing was added to store ${store}`,
      { subject: by },
      EXIT.FAILURE,
    );
  }
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new StoreError(
      'AIRLOCK_NO_SPACE',
      `no space left in store ${store} while importing version ${label} (${code}); nothing was added: free some space and import again`,
      { subject: store },
      EXIT.FAILURE,
    );
  }
  return err;
}
