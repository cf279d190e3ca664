import { gunzipSync } from 'node:zlib';
import { applyFossil } from './fossil-apply.js';
import { MalformedError, DigestMismatchError } from '../errors.js';
import { parseManifest, type Manifest } from '../package/manifest.js';
import { MAX_MANIFEST_BYTES, MAX_SIGNATURES, SIGNATURE_BYTES, inputPath, type PackageInput } from '../package/reader.js';
import type { FileSpan } from '../archive/index.js';
import { CANONICAL_ARCHIVE } from './canonical.js';
import { DELTA_MEMBERS as M, gunzipProblem, parseDeltaEnvelope, parseDeltaOps, sha256Hex, targetSignatureMember, type DeltaManifest } from './format.js';
import { ZERO_DIGEST, digestTemplate, fillDigests } from './template.js';
import { openFile, readExact, readMembers, type Member } from './members.js';

export interface DeltaLayout {
  path: string;
  /** Set when the delta is read in place from its volumes (src/package/volumes). */
  spans?: readonly FileSpan[];
  manifest: DeltaManifest;
  manifestBytes: Buffer;
  signature: Buffer | null;
  /**
   * The target manifest as carried: a gzipped fossil delta against the base's manifest (template)
   * bytes (resolveTarget), and every signature of the target manifest (target.json.sig,
   * target.json.sig.2 … at most MAX_SIGNATURES; `signature` is the first), as in the full package.
   */
  target: { patch: Buffer; signature: Buffer | null; signatures: Buffer[] };
  payload: Member;
}

const TARGET_SIGS = Array.from({ length: MAX_SIGNATURES }, (_, i) => targetSignatureMember(i + 1));
/** The members of a delta package, in order (optional ones may be absent). */
export const DELTA_ORDER = [
  { name: M.manifest },
  { name: M.sig, optional: true },
  { name: M.ops },
  { name: M.target },
  ...TARGET_SIGS.map((name) => ({ name, optional: true })),
  { name: M.payload },
];

/** Is this file a delta package? Only its first member's name and the start of its manifest are read. */
export async function isDeltaPackage(input: PackageInput): Promise<boolean> {
  const path = inputPath(input);
  const { fh, size } = await openFile(input, 'package').catch(() => ({ fh: null, size: 0 }));
  if (!fh) return false;
  try {
    if (size < 1024) return false;
    const head = await readExact(fh, 0, 1024, size, path);
    return (
      head.subarray(0, 13).toString('latin1') === 'airlock.json\0' &&
      head.subarray(512, 1024).toString('latin1').replace(/\s/g, '').startsWith('{"format":"airlock-delta/')
    );
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
export async function readDelta(input: PackageInput): Promise<DeltaLayout> {
  const path = inputPath(input);
  const { fh, size } = await openFile(input, 'delta package');
  try {
    const members = await readMembers(fh, size, DELTA_ORDER, `delta package ${path}`);
    // Target signatures are numbered 1, 2, 3 … without a gap (a package's rule); more than MAX_SIGNATURES is an unexpected member above.
    const targetSigs = TARGET_SIGS.filter((name) => members.has(name));
    const gap = targetSigs.findIndex((name, i) => name !== TARGET_SIGS[i]);
    if (gap >= 0)
      throw new MalformedError(
        'AIRLOCK_PACKAGE_MEMBERS',
        `delta package ${path}: ${targetSigs[gap]} follows ${gap === 0 ? M.target : targetSigs[gap - 1]}; target signatures are ${TARGET_SIGS[0]}, ${TARGET_SIGS[1]} … in order, without a gap`,
        { subject: targetSigs[gap]! },
      );
    const body = async (m: Member | undefined, max: number): Promise<Buffer | null> => {
      if (!m) return null;
      if (m.size > max) throw new MalformedError('AIRLOCK_BAD_MANIFEST', `${m.name} is ${m.size} bytes (limit ${max})`, { subject: m.name });
      return readExact(fh, m.offset, m.size, size, m.name);
    };
    const sigOf = async (m: Member | undefined) => {
      if (m && m.size !== SIGNATURE_BYTES)
        throw new MalformedError('AIRLOCK_BAD_SIGNATURE', `${m.name} is ${m.size} bytes; an Ed25519 signature is ${SIGNATURE_BYTES}`, { subject: m.name });
      return body(m, SIGNATURE_BYTES);
    };
    const manifestBytes = (await body(members.get(M.manifest), MAX_MANIFEST_BYTES))!;
    const envelope = parseDeltaEnvelope(manifestBytes);
    const opsGz = (await body(members.get(M.ops), MAX_MANIFEST_BYTES))!;
    if (opsGz.length !== envelope.opsFile.size || sha256Hex(opsGz) !== envelope.opsFile.sha256) {
      throw new DigestMismatchError(
        'AIRLOCK_DIGEST_MISMATCH',
        `${M.ops} is not the ${envelope.opsFile.size}-byte member with the sha256 the delta manifest names`,
        { subject: M.ops },
      );
    }
    const manifest: DeltaManifest = { ...envelope, ...parseDeltaOps(gunzipBounded(opsGz, envelope.opsFile.expandedSize, M.ops)) };
    const patch = (await body(members.get(M.target), MAX_MANIFEST_BYTES))!;
    const layout: DeltaLayout = {
      path,
      ...(typeof input === 'string' ? {} : { spans: input.spans }),
      manifest,
      manifestBytes,
      signature: await sigOf(members.get(M.sig)),
      target: { patch, signature: null, signatures: [] },
      payload: members.get(M.payload)!,
    };
    for (const name of targetSigs) layout.target.signatures.push((await sigOf(members.get(name)))!);
    layout.target.signature = layout.target.signatures[0] ?? null;
    if (layout.payload.size !== manifest.payload.size)
      throw bad(`payload.gz is ${layout.payload.size} bytes but the delta manifest says ${manifest.payload.size}`, M.payload);
    if (manifest.base.version === manifest.version) throw bad(`the delta's base and target are both version ${manifest.version}`, M.manifest);
    return layout;
  } finally {
    await fh.close();
  }
}

/** Gunzip a member that must expand to exactly `expected` bytes (itself at most the manifest limit). */
function gunzipBounded(gz: Buffer, expected: number, subject: string): Buffer {
  if (expected > MAX_MANIFEST_BYTES) throw bad(`${subject} declares ${expected} bytes expanded (limit ${MAX_MANIFEST_BYTES})`, subject);
  let out: Buffer;
  try {
    out = gunzipSync(gz, { maxOutputLength: Math.max(1, expected) });
  } catch (err) {
    const why = gunzipProblem(err, expected);
    throw bad(
      why?.startsWith('expands')
        ? `${subject} expands to more than the ${expected} bytes the delta manifest declares`
        : `${subject} ${why ?? 'cannot be decompressed'}`,
      subject,
    );
  }
  if (out.length !== expected) throw bad(`${subject} expands to ${out.length} bytes but the delta manifest says ${expected}`, subject);
  return out;
}

function bad(message: string, subject: string): MalformedError {
  return new MalformedError('AIRLOCK_BAD_DELTA', message, { subject });
}

/**
 * The target manifest as far as it is known before the files are rebuilt: exact bytes (`inline`),
 * or a digest template whose file digests are zeros (`template`; finishTarget fills them). Either
 * way parsed like any package manifest and held to the delta's own rules.
 */
export interface ResolvedTarget {
  manifest: Manifest;
  manifestBytes: Buffer;
  signature: Buffer | null;
  signatures: Buffer[];
  template: boolean;
}

/**
 * Rebuild the target manifest (or its template) from the base's exact manifest bytes (bounded: the
 * gzip and the fossil delta may expand to at most the manifest limit). An inline target is checked
 * against the digest the delta names here; a template after finishTarget.
 */
export function resolveTarget(l: DeltaLayout, baseManifestBytes: Buffer, baseManifest: Manifest): ResolvedTarget {
  const template = l.manifest.target.digests === 'template';
  const source = template ? digestTemplate(baseManifestBytes, baseManifest.files) : baseManifestBytes;
  if (!source)
    throw new DigestMismatchError(
      'AIRLOCK_DELTA_BASE',
      `the base manifest of ${l.manifest.base.version} has no digest template: its file digests are not in manifest order`,
      { subject: l.manifest.base.version },
    );
  let bytes: Buffer;
  const refuse = (why: string) =>
    new DigestMismatchError('AIRLOCK_DELTA_PATCH', `${M.target} does not rebuild the target manifest from the base's: ${why}`, { subject: M.target });
  let patch: Buffer;
  try {
    patch = gunzipSync(l.target.patch, { maxOutputLength: MAX_MANIFEST_BYTES });
  } catch (err) {
    throw refuse(`it ${gunzipProblem(err, MAX_MANIFEST_BYTES) ?? 'cannot be decompressed'}`);
  }
  try {
    bytes = applyFossil(source, patch, MAX_MANIFEST_BYTES);
  } catch (err) {
    throw refuse((err as Error).message); // fossil-apply's own words
  }
  if (!template) checkTargetDigest(l, bytes);
  const manifest = parseManifest(bytes, 'the target manifest');
  if (template && manifest.files.some((f) => f.sha256 !== ZERO_DIGEST))
    throw bad('the target manifest template has file digests that are not zeroed', M.target);
  const t: ResolvedTarget = { manifest, manifestBytes: bytes, signature: l.target.signature, signatures: l.target.signatures, template };
  checkConsistent(l, t.manifest);
  return t;
}

function checkTargetDigest(l: DeltaLayout, bytes: Buffer): void {
  if (sha256Hex(bytes) !== l.manifest.target.manifestSha256) {
    throw new DigestMismatchError(
      'AIRLOCK_DIGEST_MISMATCH',
      `the rebuilt target manifest has sha256 ${sha256Hex(bytes)} but the delta names ${l.manifest.target.manifestSha256}`,
      { subject: M.target },
    );
  }
}

/**
 * The target's exact manifest, once every file is rebuilt: an inline one with every rebuilt file's
 * digest checked against it (naming the first that differs), or a template filled with the
 * digests of the rebuilt files (manifest order), checked against the digest the delta names. A
 * file rebuilt wrong fails either check, so nothing built from a bad delta gets past here.
 */
export function finishTarget(l: DeltaLayout, t: ResolvedTarget, digests: ReadonlyMap<string, string>): ResolvedTarget {
  if (!t.template) {
    for (const f of t.manifest.files) {
      const got = digests.get(f.path);
      if (got !== f.sha256)
        throw new DigestMismatchError(
          'AIRLOCK_DIGEST_MISMATCH',
          `${f.path} was rebuilt with sha256 ${got ?? '(none)'} but the target manifest says ${f.sha256}`,
          { subject: f.path },
        );
    }
    return t;
  }
  const list = t.manifest.files.map((f) => digests.get(f.path) ?? ZERO_DIGEST);
  const bytes = fillDigests(t.manifestBytes, list);
  if (!bytes) throw bad('the target manifest template does not hold one zeroed digest per file', M.target);
  if (sha256Hex(bytes) !== l.manifest.target.manifestSha256) {
    // Which file is wrong cannot be told (its true digest did not travel): name what the delta built.
    const built = l.manifest.ops.map((op) => op.path);
    const shown = built.slice(0, 10).join(', ') + (built.length > 10 ? `, … (${built.length} in all)` : '');
    throw new DigestMismatchError(
      'AIRLOCK_DIGEST_MISMATCH',
      `the files rebuilt from this delta do not give the signed target manifest (sha256 ${l.manifest.target.manifestSha256}): a copy, patch or whole file is wrong; the delta built ${shown}`,
      { subject: M.target },
    );
  }
  // The filled bytes are the template's (parsed and held to the schema in resolveTarget) with one
  // zeroed digest per file filled in. When every file of their parse has the digest filled for it,
  // every fill landed on a file's sha256 and all else is the template's: the schema holds without
  // running it again (a 3,000-file manifest's second full parse).
  const manifest = JSON.parse(bytes.toString('utf8')) as Manifest;
  if (!Array.isArray(manifest.files) || manifest.files.length !== list.length || manifest.files.some((f, i) => f?.sha256 !== list[i])) {
    throw bad('the target manifest template does not hold one zeroed digest per file, in file order', M.target);
  }
  return { manifest, manifestBytes: bytes, signature: t.signature, signatures: t.signatures, template: false };
}

function checkConsistent(l: DeltaLayout, t: Manifest): void {
  const d = l.manifest;
  if (d.domain !== t.domain || d.version !== t.version)
    throw bad(`the delta is for ${d.domain} ${d.version} but the target manifest is ${t.domain} ${t.version}`, M.target);
  if (t.archive.name !== CANONICAL_ARCHIVE)
    throw bad(`the target manifest names the archive ${t.archive.name}; a delta's target carries the canonical ${CANONICAL_ARCHIVE}`, M.target);
  const targetPaths = new Set(t.files.map((f) => f.path));
  const seen = new Set<string>();
  let offset = 0;
  for (const op of d.ops) {
    if (!targetPaths.has(op.path)) throw bad(`the delta writes ${JSON.stringify(op.path)}, which the target manifest does not list`, op.path);
    if (seen.has(op.path)) throw bad(`the delta names ${JSON.stringify(op.path)} twice`, op.path);
    seen.add(op.path);
    if (op.kind === 'copy') continue;
    if (op.offset !== offset)
      throw bad(`the payload blob of ${JSON.stringify(op.path)} starts at ${op.offset}, expected ${offset} (blobs are contiguous, in order)`, op.path);
    offset += op.length;
  }
  if (offset !== d.payload.expandedSize)
    throw bad(`the operations use ${offset} payload bytes but the delta manifest declares ${d.payload.expandedSize}`, M.payload);
}
