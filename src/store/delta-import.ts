import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { DigestMismatchError, MalformedError, StoreError } from '../errors.js';
import { ARCHIVE_CODES, probeCaseFolding, writeSmall } from '../archive/index.js';
import {
  checkManifestLimits,
  countPages,
  inputPath,
  parseManifest,
  type Manifest,
  signatureMember,
  type PackageInput,
  type PackageLayout,
} from '../package/index.js';
import {
  canonicalArchiveOffset,
  finishTarget,
  namePatchThatFailed,
  readBaseAhead,
  readDelta,
  rebuildSite,
  resolveTarget,
  type DeltaLayout,
  type ResolvedTarget,
} from '../delta/index.js';
import { admitPackage, checkFreshness, readSeen, type Admission } from './admit.js';
import { inPool } from '../util/pool.js';
import { fileSha256, fsyncDir } from '../util/fsx.js';
import type { ReadAhead } from '../util/read-ahead.js';
import { existingMeta } from './existing.js';
import { addVersion, beginLocked, importEvent, keepExisting, type ImportOptions, type ImportResult } from './add-version.js';
import { loadPolicy } from './policy.js';
import { storeKind } from './location.js';
import { checkDeltaEnvelope } from './delta-envelope.js';
import { withLock, type StoreLock } from './lock.js';
import { readStoredManifestRaw, type VersionMeta } from './meta.js';
import { siteFolders, versionDir, versionPaths } from './paths.js';
import { checkFreeSpace, requiredBytes } from './space.js';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/**
 * Import a delta package (src/delta). The delta manifest's signature is checked first (by
 * a trusted key; under a trust policy by a live key of the policy: the envelope binds base, ops
 * and payload to a signer). The base version must be in the store with exactly the manifest digest
 * the delta names (else exit 4 naming label and digest), the target's site is rebuilt in staging
 * from the base's files and the delta, and every rebuilt file must match the target manifest. The
 * target manifest with every target signature the delta carries is then admitted exactly as the
 * full target package would be (admitPackage: the flat rule or the policy's threshold, expiry,
 * audience, no downgrade), and committed like any import (commitStaged: its audit line first,
 * then one rename). The result is an ordinary complete version, whose package file is built only
 * when the mirror is asked for it (rebuilt-package.ts): the import writes no 2nd copy of the site.
 * `note` learns the delta's domain and version (for a refusal's line).
 */
export async function importDelta(pkgPath: PackageInput, o: ImportOptions, note: { domain?: string; version?: string } = {}): Promise<ImportResult> {
  const pkg = typeof pkgPath === 'string' ? resolve(pkgPath) : pkgPath;
  const { store, signal } = o;
  const kind = await storeKind(store);
  o.onProgress?.({ phase: 'verify', pkg: inputPath(pkg) });
  const layout = await readDelta(pkg);
  Object.assign(note, { domain: layout.manifest.domain, version: layout.manifest.version });
  await checkDeltaEnvelope(store, layout, o);
  if (kind === 'missing') throw missingBase(layout, store);
  signal?.throwIfAborted();
  return withLock(store, (lock) => importLocked(pkg, layout, o, lock), {
    timeoutMs: o.lockTimeoutMs,
    signal,
    onWait: (pid) => o.onProgress?.({ phase: 'lock-wait', pid }),
  });
}

/**
 * What `verify DELTA --store S` can say before the base and the rebuild: the delta manifest's
 * signature under the store's rule, as import checks it first (read only). Import then admits the
 * rebuilt target with its signatures (threshold, freshness) as it would the full package.
 */
function missingBase(layout: DeltaLayout, store: string): Error {
  const { base, version } = layout.manifest;
  return new DigestMismatchError(
    'AIRLOCK_DELTA_BASE',
    `this delta needs version ${base.version} with manifest sha256 ${base.manifestSha256} in store ${store}; import that version (or a full package of ${version}) first`,
    { subject: base.version, manifestSha256: base.manifestSha256 },
  );
}

/**
 * The base's exact manifest bytes (read once, bounded) and their parse, when the store holds that
 * version with the digest the delta names; anything else is the missing base (exit 4).
 */
/**
 * verify DELTA --store: what import decides of the target before the rebuild, read only. Its base
 * in the store (else AIRLOCK_DELTA_BASE), and the target's order, expiry and audience, as for the
 * full package; a version already in the store needs a readable seen record only, as at import.
 * Returns the rules --allow-downgrade overrode.
 */
export async function checkDeltaTarget(store: string, layout: DeltaLayout, allowDowngrade: boolean): Promise<string[]> {
  const base = await findBase(store, layout);
  const t = resolveTarget(layout, base.bytes, base.manifest);
  if (await existingMeta(versionDir(store, t.manifest.version))) {
    await readSeen(store);
    return [];
  }
  return checkFreshness(store, t.manifest, (await loadPolicy(store))?.policy.identity ?? null, new Date(), allowDowngrade);
}

async function findBase(store: string, layout: DeltaLayout): Promise<{ dir: string; bytes: Buffer; manifest: Manifest }> {
  const dir = versionDir(store, layout.manifest.base.version);
  const bytes = await readStoredManifestRaw(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR' || err.code === 'EISDIR') return null;
    throw err;
  });
  if (!bytes || !(await existingMeta(dir)) || sha256(bytes) !== layout.manifest.base.manifestSha256) throw missingBase(layout, store);
  return { dir, bytes, manifest: parseManifest(bytes, versionPaths(dir).manifest) };
}

async function importLocked(pkg: PackageInput, layout: DeltaLayout, o: ImportOptions, lock: StoreLock): Promise<ImportResult> {
  await beginLocked(o);
  const base = await findBase(o.store, layout);
  // The delta's version is its target's (resolveTarget checks): a version already in the store needs no base file.
  const existing = await existingMeta(versionDir(o.store, layout.manifest.version));
  // The base files the patches read are read from now on, while the target manifest is resolved and admitted.
  const ahead = existing ? null : readBaseAhead(layout, base.manifest, versionPaths(base.dir).site);
  try {
    return await importOnBase(pkg, layout, o, lock, base, existing, ahead ?? undefined);
  } finally {
    await ahead?.settle();
  }
}

async function importOnBase(
  pkg: PackageInput,
  layout: DeltaLayout,
  o: ImportOptions,
  lock: StoreLock,
  base: Awaited<ReturnType<typeof findBase>>,
  existing: VersionMeta | null,
  ahead: ReadAhead | undefined,
): Promise<ImportResult> {
  const { store, signal, onProgress } = o;
  const admit = (t: Pick<PackageLayout, 'manifest' | 'manifestBytes' | 'signature' | 'signatures'>) =>
    admitPackage(store, t, { trust: o.trust, allowUnsigned: o.allowUnsigned, allowDowngrade: o.allowDowngrade });
  const baseManifest = base.manifest;
  const resolved = resolveTarget(layout, base.bytes, baseManifest);
  // An inline target manifest is admitted now. A digest template's signatures verify only once its
  // files are rebuilt; before that its freshness is checked (cheap; not for a version already in
  // the store, which admit() below judges with its exact bytes), and one without any target
  // signature is refused at once (unsigned, or below any threshold).
  const target = resolved.manifest;
  const label = target.version;
  const finalDir = versionDir(store, label);
  if (!resolved.template || resolved.signatures.length === 0) await admit(resolved);
  else if (!existing) await checkFreshness(store, target, (await loadPolicy(store))?.policy.identity ?? null, new Date(), o.allowDowngrade ?? false);
  checkManifestLimits(target, o.limits);
  if (!target.files.some((f) => f.path === 'index.html')) {
    throw new MalformedError(ARCHIVE_CODES.NO_INDEX, 'the target manifest lists no index.html at the root of the site: it cannot be served', {
      subject: 'index.html',
    });
  }
  if (existing) {
    const stored = await readStoredManifestRaw(finalDir);
    if (sha256(stored) !== layout.manifest.target.manifestSha256) {
      throw new StoreError(
        'AIRLOCK_VERSION_CONFLICT',
        `version ${label} is already in the store with different content (its manifest differs from this delta's target); choose another version label`,
        { subject: label },
      );
    }
    const manifest = parseManifest(stored, versionPaths(finalDir).manifest);
    const a = await admit({ manifest, manifestBytes: stored, signature: resolved.signature, signatures: resolved.signatures });
    return keepExisting(o, label, deltaEvent(pkg, layout, a, 'unchanged', typeof pkg === 'string' ? await fileSha256(pkg) : null), a, manifest);
  }
  await checkFreeSpace(
    store,
    requiredBytes(
      target.archive.size,
      target.files.map((f) => f.size),
    ),
  );
  return addVersion(o, lock, label, async (staging) => {
    const p = versionPaths(staging);
    await mkdir(p.site);
    if (await probeCaseFolding(staging)) refuseCasePairs(target.files.map((f) => f.path));
    onProgress?.({ phase: 'extract', dir: p.site, total: target.archive.size });
    const rebuilt = await rebuildSite({ layout, target, baseManifest, baseSite: versionPaths(base.dir).site, destSite: p.site, signal, ahead }).catch(
      pathClash,
    );
    let final: ResolvedTarget;
    try {
      final = finishTarget(layout, resolved, rebuilt.digests); // every rebuilt file against the target manifest
    } catch (err) {
      throw (err instanceof DigestMismatchError && (await namePatchThatFailed(p.site, rebuilt.patched))) || err; // a patch that did not apply, by name
    }
    // The target manifest with every target signature, admitted as the full target package would be.
    const admission = await admit(final);
    const signer = admission.signers[0] ?? null;
    // No package file: the target's package is a pure function of these files, this manifest and
    // its signatures (kept beside it), built when the mirror is first asked for it (rebuilt-package.ts).
    const meta: VersionMeta = {
      label,
      domain: target.domain,
      importedAt: new Date().toISOString(),
      packageSha256: null,
      archive: {
        name: target.archive.name,
        format: 'tar',
        offset: canonicalArchiveOffset(final.manifestBytes.length, final.signatures),
        size: target.archive.size,
        sha256: target.archive.sha256,
      },
      signer,
      ...(admission.signers.length > 1 ? { signers: admission.signers } : {}),
      pageCount: target.pageCount ?? countPages(target.files),
      fileCount: target.files.length,
      totalBytes: target.files.reduce((n, f) => n + f.size, 0),
      delta: { base: layout.manifest.base.version, baseManifestSha256: layout.manifest.base.manifestSha256 },
    };
    // The manifest, its signatures and version.json are written and fsynced (writeSmall) while
    // the site's folders are fsynced (rebuildSite fsynced every file): one wait, not one per file.
    const small: [string, Buffer][] = [
      [p.manifest, final.manifestBytes],
      ...final.signatures.map((sig, i): [string, Buffer] => [join(staging, signatureMember(i + 1)), sig]),
      [p.meta, Buffer.from(JSON.stringify(meta, null, 2) + '\n')],
    ];
    await inPool(
      [
        ...small.map(
          ([at, b]) =>
            () =>
              writeSmall(at, [b], b.length),
        ),
        ...siteFolders(p.site, target.files).map((d) => () => fsyncDir(d)),
      ],
      (task) => task(),
    );
    await fsyncDir(staging);
    onProgress?.({ phase: 'extracted', files: meta.fileCount, bytes: meta.totalBytes });
    const sha = typeof pkg === 'string' ? await fileSha256(pkg) : null;
    return { audit: deltaEvent(pkg, layout, admission, 'imported', sha), seen: final.manifest, admission };
  });
}

/** The audit line of a delta import: the delta file's sha256 (what was imported, as a refusal's line has it), the rule that admitted it, the base. */
function deltaEvent(pkg: PackageInput, layout: DeltaLayout, admission: Admission, outcome: 'imported' | 'unchanged', packageSha256: string | null) {
  return importEvent({
    package: inputPath(pkg),
    packageSha256,
    domain: layout.manifest.domain,
    version: layout.manifest.version,
    admission,
    outcome,
    how: `delta from ${layout.manifest.base.version}`,
  });
}

/** On a case-folding store, two target paths that differ only in case would land on one file. */
function refuseCasePairs(paths: string[]): void {
  const seen = new Map<string, string>();
  for (const path of paths) {
    const key = path.normalize('NFC').toLowerCase();
    const other = seen.get(key);
    if (other !== undefined)
      throw new MalformedError(ARCHIVE_CODES.CASE_COLLISION, `${other} and ${path} differ only in case, and this store's file system folds case`, {
        subject: path,
      });
    seen.set(key, path);
  }
}

/** A target manifest listing both "a" and "a/b" cannot be laid out: exit 4, not an I/O error. */
function pathClash(err: unknown): never {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOTDIR' || code === 'EEXIST' || code === 'EISDIR') {
    throw new MalformedError(
      'AIRLOCK_BAD_DELTA',
      `the target's files cannot be laid out (${code} at ${(err as NodeJS.ErrnoException).path ?? '?'}): a path is both a file and a folder`,
      { subject: 'target.json' },
    );
  }
  throw err;
}
