import { randomBytes, sign, type KeyObject } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import { createDelta } from 'fossil-delta';
import { UsageError, outputExists } from '../errors.js';
import { extractArchive, hashByteSource, type FileRecord } from '../archive/index.js';
import { compareToManifest } from '../package/compare.js';
import { type Manifest } from '../package/manifest.js';
import { MAX_SIGNATURES, readPackage, type PackageLayout } from '../package/reader.js';
import { writePackage } from '../package/writer.js';
import { CANONICAL_ARCHIVE, HashingOut, writeCanonicalTar } from './canonical.js';
import { DELTA_FORMAT, DELTA_MEMBERS, encodeDeltaManifest, sha256Hex, targetSignatureMember, type DeltaManifestFields, type DeltaOp } from './format.js';
import { digestTemplate, fillDigests } from './template.js';
import { basePeers, planFile } from './plan.js';
import { writeMembers } from './write.js';
import { removeEmptyUpTo } from '../util/fsx.js';
import { refuseExistingVolumes } from '../package/volumes/split-written.js';

export interface DeltaOptions {
  oldPkg: string;
  newPkg: string;
  outDir: string;
  signKey?: KeyObject;
  signal?: AbortSignal;
  /** The delta will be split into volumes (--split): a volume name already taken is refused first. */
  splitting?: boolean;
}
export interface DeltaSummary {
  delta: string;
  full: string;
  base: { version: string; manifestSha256: string };
  version: string;
  deltaBytes: number;
  fullBytes: number;
  ops: Record<DeltaOp['kind'], number>;
  unchanged: number;
  removed: number;
}

export const deltaPath = (outDir: string, m: Pick<Manifest, 'domain' | 'version'>): string => join(outDir, `${m.domain}-${m.version}.delta.airlock`);
export const fullPath = (outDir: string, m: Pick<Manifest, 'domain' | 'version'>): string => join(outDir, `${m.domain}-${m.version}.full.airlock`);

async function extracted(pkg: string, layout: PackageLayout, dir: string): Promise<void> {
  const scan = await extractArchive({ path: pkg, offset: layout.archive.offset, length: layout.archive.size }, dir, {
    format: layout.manifest.archive.format,
    foldsCase: false,
  });
  compareToManifest(layout.manifest, scan);
}

/**
 * The digest templates of both manifests (template.ts), when both have one and the target's fills
 * back to its exact bytes; else null, and the delta carries the target manifest inline.
 */
function manifestTemplates(base: PackageLayout, target: PackageLayout): [Buffer, Buffer] | null {
  const b = digestTemplate(base.manifestBytes, base.manifest.files);
  const t = digestTemplate(target.manifestBytes, target.manifest.files);
  if (!b || !t) return null;
  const back = fillDigests(
    t,
    target.manifest.files.map((f) => f.sha256),
  );
  return back?.equals(target.manifestBytes) ? [b, t] : null;
}

/**
 * Every signature of the target manifest the delta can carry (trust policy, several signers): the target package's
 * (--sign-key), and NEW's own when NEW's manifest is byte for byte the target's (NEW is already
 * canonical, e.g. a .full package that several people signed), each distinct one once, at most
 * MAX_SIGNATURES. NEW's signatures over other bytes do not verify over the target and are left
 * out: further signers sign the delta (`airlock sign DELTA`), which signs the target manifest.
 */
function targetSignatures(newL: PackageLayout, targetL: PackageLayout): Buffer[] {
  const all = [...targetL.signatures, ...(newL.manifestBytes.equals(targetL.manifestBytes) ? newL.signatures : [])];
  const seen = new Set<string>();
  return all.filter((s) => !seen.has(s.toString('hex')) && Boolean(seen.add(s.toString('hex')))).slice(0, MAX_SIGNATURES);
}

/**
 * `airlock delta OLD NEW`: on the connected side, write
 *  - DIR/<domain>-<version>.full.airlock: NEW's site as a full package in canonical form (bundle.tar),
 *    signed like NEW was meant to be: the version the receiver will have; keep it as the next base;
 *  - DIR/<domain>-<version>.delta.airlock: what turns OLD (by its manifest digest) into that package.
 */
export async function makeDelta(o: DeltaOptions): Promise<DeltaSummary> {
  const [oldL, newL] = [await readPackage(o.oldPkg), await readPackage(o.newPkg)];
  const [om, nm] = [oldL.manifest, newL.manifest];
  if (om.domain !== nm.domain)
    throw new UsageError(`OLD is a package of ${om.domain} and NEW of ${nm.domain}; a delta joins two versions of one site`, { subject: o.newPkg });
  if (nm.vendor || newL.vendor.length > 0)
    throw new UsageError(`NEW carries vendored third-party files (--vendor); a delta cannot carry them yet: send the full package`, { subject: o.newPkg });
  if (om.version === nm.version)
    throw new UsageError(`OLD and NEW are both version ${nm.version}; a delta needs two different version labels`, { subject: o.newPkg });
  const dOut = deltaPath(o.outDir, nm);
  const fOut = fullPath(o.outDir, nm);
  const created = await mkdir(o.outDir, { recursive: true });
  for (const p of [dOut, fOut])
    if (
      await stat(p).then(
        () => true,
        () => false,
      )
    )
      throw outputExists(p);
  if (o.splitting) await refuseExistingVolumes(dOut);
  const work = join(o.outDir, `.airlock-delta-${randomBytes(6).toString('hex')}`);
  await mkdir(work);
  let wroteFull = false;
  let wroteDelta = false;
  try {
    const [oldSite, newSite] = [join(work, 'old'), join(work, 'new')];
    await extracted(o.oldPkg, oldL, oldSite);
    await extracted(o.newPkg, newL, newSite);
    o.signal?.throwIfAborted();

    // 1. The target in canonical form, signed: exactly what the receiver will rebuild.
    const mtime = new Date(Math.floor(Date.parse(nm.createdAt) / 1000) * 1000);
    const tarPath = join(work, CANONICAL_ARCHIVE);
    const fh = await open(tarPath, 'wx');
    try {
      const out = new HashingOut(fh);
      await writeCanonicalTar(out, newSite, nm.files, mtime, o.signal);
      await out.flush();
    } finally {
      await fh.close();
    }
    const tarSize = (await stat(tarPath)).size;
    const target: Manifest = { ...nm, archive: { name: CANONICAL_ARCHIVE, format: 'tar', size: tarSize, sha256: await hashByteSource({ path: tarPath }) } };
    o.signal?.throwIfAborted();
    const full = await writePackage({ outPath: fOut, manifest: target, archivePath: tarPath, signKey: o.signKey, exclusive: true });
    wroteFull = true;
    o.signal?.throwIfAborted();
    const targetL = await readPackage(fOut);

    // 2. The operations and the payload they point into.
    const peers = basePeers(om.files);
    const read = { base: (p: string) => readFile(join(oldSite, p)), target: (p: string) => readFile(join(newSite, p)) };
    const ops: DeltaOp[] = [];
    const counts = { copy: 0, patch: 0, whole: 0 };
    let unchanged = 0;
    let offset = 0;
    const payloadPath = join(work, DELTA_MEMBERS.payload);
    const blobs = async function* (): AsyncGenerator<Buffer> {
      for (const f of nm.files as FileRecord[]) {
        o.signal?.throwIfAborted();
        const plan = await planFile(f, peers, read);
        if (plan.kind === 'base') {
          unchanged++;
          continue;
        }
        counts[plan.kind]++;
        if (plan.kind === 'copy') {
          ops.push({ kind: 'copy', path: f.path, from: plan.from });
          continue;
        }
        const bytes = plan.kind === 'patch' ? plan.patch : await read.target(f.path);
        ops.push(
          plan.kind === 'patch'
            ? { kind: 'patch', path: f.path, from: plan.from, offset, length: bytes.length }
            : { kind: 'whole', path: f.path, offset, length: bytes.length },
        );
        offset += bytes.length;
        yield bytes;
      }
    };
    // The signal reaches the compression too: one large file's patch and gzip can take seconds.
    await pipeline(Readable.from(blobs()), createGzip({ level: 9 }), createWriteStream(payloadPath, { flags: 'wx' }), { signal: o.signal });
    o.signal?.throwIfAborted();
    const payloadSize = (await stat(payloadPath)).size;
    const targetPaths = new Set(nm.files.map((f) => f.path));
    const templates = manifestTemplates(oldL, targetL);
    const manifest: DeltaManifestFields = {
      format: DELTA_FORMAT,
      domain: nm.domain,
      version: nm.version,
      createdAt: new Date().toISOString(),
      base: { version: om.version, manifestSha256: sha256Hex(oldL.manifestBytes) },
      target: { manifestSha256: sha256Hex(targetL.manifestBytes), digests: templates ? 'template' : 'inline' },
      payload: { size: payloadSize, sha256: await hashByteSource({ path: payloadPath }), expandedSize: offset },
      ops,
      removed: om.files.filter((f) => !targetPaths.has(f.path)).map((f) => f.path),
    };
    const { manifestBytes: bytes, opsGz } = encodeDeltaManifest(manifest);
    const members: { name: string; body: { bytes: Buffer } }[] = [{ name: DELTA_MEMBERS.manifest, body: { bytes } }];
    if (o.signKey) members.push({ name: DELTA_MEMBERS.sig, body: { bytes: sign(null, bytes, o.signKey) } });
    members.push({ name: DELTA_MEMBERS.ops, body: { bytes: opsGz } });
    const [from, to] = templates ?? [oldL.manifestBytes, targetL.manifestBytes];
    const targetPatch = gzipSync(Buffer.from(createDelta(new Uint8Array(from), new Uint8Array(to))), { level: 9 });
    members.push({ name: DELTA_MEMBERS.target, body: { bytes: targetPatch } });
    for (const [i, sig] of targetSignatures(newL, targetL).entries()) members.push({ name: targetSignatureMember(i + 1), body: { bytes: sig } });
    o.signal?.throwIfAborted();
    const written = await writeMembers(dOut, [...members, { name: DELTA_MEMBERS.payload, body: { file: payloadPath, size: payloadSize } }], mtime);
    wroteDelta = true;
    // A stop asked for while the delta was written is still a stop: all or nothing, nothing kept.
    o.signal?.throwIfAborted();
    return {
      delta: written.path,
      full: full.path,
      base: manifest.base,
      version: nm.version,
      deltaBytes: written.size,
      fullBytes: (await stat(full.path)).size,
      ops: counts,
      unchanged,
      removed: manifest.removed.length,
    };
  } catch (err) {
    if (wroteFull) await rm(fOut, { force: true }); // all or nothing: no target without its delta
    if (wroteDelta) await rm(dOut, { force: true });
    await rm(work, { recursive: true, force: true });
    if (created !== undefined) await removeEmptyUpTo(o.outDir, created); // a refused or interrupted run leaves no new folder
    throw err;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
