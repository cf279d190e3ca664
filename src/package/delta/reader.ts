import { gunzipSync } from 'node:zlib';
import { applyDelta, getDeltaTargetSize } from 'fossil-delta';
import { MalformedError, DigestMismatchError } from '../../errors.js';
import { parseManifest, type Manifest } from '../manifest.js';
import { MAX_MANIFEST_BYTES, SIGNATURE_BYTES } from '../reader.js';
import { CANONICAL_ARCHIVE } from './canonical.js';
import { DELTA_MEMBERS as M, parseDeltaManifest, sha256Hex, type DeltaManifest } from './format.js';
import { openFile, readExact, readMembers, type Member } from './members.js';

export interface DeltaLayout {
  path: string;
  manifest: DeltaManifest;
  manifestBytes: Buffer;
  signature: Buffer | null;
  /** The target manifest as carried: a gzipped fossil delta against the base's manifest bytes (resolveTarget). */
  target: { patch: Buffer; signature: Buffer | null };
  payload: Member;
}

const ORDER = [{ name: M.manifest }, { name: M.sig, optional: true }, { name: M.target }, { name: M.targetSig, optional: true }, { name: M.payload }];

/** Is this file a delta package? Only its first member's name and the start of its manifest are read. */
export async function isDeltaPackage(path: string): Promise<boolean> {
  const { fh, size } = await openFile(path, 'package').catch(() => ({ fh: null, size: 0 }));
  if (!fh) return false;
  try {
    if (size < 1024) return false;
    const head = await readExact(fh, 0, 1024, size, path);
    return head.subarray(0, 13).toString('latin1') === 'airlock.json\0' && head.subarray(512, 1024).toString('latin1').replace(/\s/g, '').startsWith('{"format":"airlock-delta/');
  } finally {
    await fh.close();
  }
}

/**
 * Read a delta package's structure, both manifests and signatures (exit 4 for anything malformed,
 * naming it). Holds the delta to its own rules: the target manifest is the one the delta names by
 * digest, is of the same domain and version, has the canonical archive; every operation names a
 * target file, no file twice; the payload blobs are contiguous, in order, and add up to its size.
 */
export async function readDelta(path: string): Promise<DeltaLayout> {
  const { fh, size } = await openFile(path, 'delta package');
  try {
    const members = await readMembers(fh, size, ORDER, `delta package ${path}`);
    const body = async (m: Member | undefined, max: number): Promise<Buffer | null> => {
      if (!m) return null;
      if (m.size > max) throw new MalformedError('AIRLOCK_BAD_MANIFEST', `${m.name} is ${m.size} bytes (limit ${max})`, { subject: m.name });
      return readExact(fh, m.offset, m.size, size, m.name);
    };
    const sigOf = async (m: Member | undefined) => {
      if (m && m.size !== SIGNATURE_BYTES) throw new MalformedError('AIRLOCK_BAD_SIGNATURE', `${m.name} is ${m.size} bytes; an Ed25519 signature is ${SIGNATURE_BYTES}`, { subject: m.name });
      return body(m, SIGNATURE_BYTES);
    };
    const manifestBytes = (await body(members.get(M.manifest), MAX_MANIFEST_BYTES))!;
    const manifest = parseDeltaManifest(manifestBytes);
    const patch = (await body(members.get(M.target), MAX_MANIFEST_BYTES))!;
    const layout: DeltaLayout = {
      path, manifest, manifestBytes, signature: await sigOf(members.get(M.sig)),
      target: { patch, signature: await sigOf(members.get(M.targetSig)) },
      payload: members.get(M.payload)!,
    };
    if (layout.payload.size !== manifest.payload.size) throw bad(`payload.gz is ${layout.payload.size} bytes but the delta manifest says ${manifest.payload.size}`, M.payload);
    if (manifest.base.version === manifest.version) throw bad(`the delta's base and target are both version ${manifest.version}`, M.manifest);
    return layout;
  } finally {
    await fh.close();
  }
}

function bad(message: string, subject: string): MalformedError {
  return new MalformedError('AIRLOCK_BAD_DELTA', message, { subject });
}

export interface ResolvedTarget { manifest: Manifest; manifestBytes: Buffer; signature: Buffer | null }

/**
 * The target manifest, rebuilt from the base's exact manifest bytes (bounded: the gzip and the
 * fossil delta may expand to at most the manifest limit), checked against the digest the delta
 * names, parsed like any package manifest, and held to the delta's own rules.
 */
export function resolveTarget(l: DeltaLayout, baseManifestBytes: Buffer): ResolvedTarget {
  let bytes: Buffer;
  try {
    const patch = gunzipSync(l.target.patch, { maxOutputLength: MAX_MANIFEST_BYTES });
    if (getDeltaTargetSize(patch) > MAX_MANIFEST_BYTES) throw new Error('it would exceed the manifest limit');
    bytes = Buffer.from(applyDelta(new Uint8Array(baseManifestBytes), new Uint8Array(patch), { verifyChecksum: true }));
  } catch (err) {
    throw new DigestMismatchError('AIRLOCK_DELTA_PATCH', `${M.target} does not rebuild the target manifest from the base's: ${(err as Error).message}`, { subject: M.target });
  }
  if (sha256Hex(bytes) !== l.manifest.target.manifestSha256) {
    throw new DigestMismatchError('AIRLOCK_DIGEST_MISMATCH', `the rebuilt target manifest has sha256 ${sha256Hex(bytes)} but the delta names ${l.manifest.target.manifestSha256}`, { subject: M.target });
  }
  const t: ResolvedTarget = { manifest: parseManifest(bytes, 'the target manifest'), manifestBytes: bytes, signature: l.target.signature };
  checkConsistent(l, t.manifest);
  return t;
}

function checkConsistent(l: DeltaLayout, t: Manifest): void {
  const d = l.manifest;
  if (d.domain !== t.domain || d.version !== t.version) throw bad(`the delta is for ${d.domain} ${d.version} but the target manifest is ${t.domain} ${t.version}`, M.target);
  if (t.archive.name !== CANONICAL_ARCHIVE) throw bad(`the target manifest names the archive ${t.archive.name}; a delta's target carries the canonical ${CANONICAL_ARCHIVE}`, M.target);
  const targetPaths = new Set(t.files.map((f) => f.path));
  const seen = new Set<string>();
  let offset = 0;
  for (const op of d.ops) {
    if (!targetPaths.has(op.path)) throw bad(`the delta writes ${JSON.stringify(op.path)}, which the target manifest does not list`, op.path);
    if (seen.has(op.path)) throw bad(`the delta names ${JSON.stringify(op.path)} twice`, op.path);
    seen.add(op.path);
    if (op.kind === 'copy') continue;
    if (op.offset !== offset) throw bad(`the payload blob of ${JSON.stringify(op.path)} starts at ${op.offset}, expected ${offset} (blobs are contiguous, in order)`, op.path);
    offset += op.length;
  }
  if (offset !== d.payload.expandedSize) throw bad(`the operations use ${offset} payload bytes but the delta manifest declares ${d.payload.expandedSize}`, M.payload);
}
