import { createPublicKey, sign, type KeyObject } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DigestMismatchError, MalformedError, UsageError } from '../errors.js';
import { fingerprint } from '../package/keys.js';
import { MAX_SIGNATURES, readPackage } from '../package/reader.js';
import { signersOf } from '../package/signature.js';
import { DELTA_MEMBERS as M, sha256Hex, targetSignatureMember } from './format.js';
import { fullPath } from './make.js';
import { openFile, readMembers } from './members.js';
import { DELTA_ORDER, readDelta } from './reader.js';
import { writeMembers, type MemberBody } from './write.js';

export interface DeltaSignResult {
  path: string;
  added: boolean;
  signer: string;
  signatures: number;
  envelopeSigned: boolean;
  full: string;
}

/**
 * `airlock sign DELTA --key K` (trust policy, several signers): add K's signature of the *target* manifest to a delta
 * package (target.json.sig.N), so a delta reaches a store's threshold exactly as the full target
 * package would. A template delta does not carry the target manifest's exact bytes (its file
 * digests are rebuilt on the receiving side), so they are read from the full package `airlock
 * delta` wrote beside it (or `full`) and must have the sha256 the delta names. A delta whose own
 * manifest is unsigned gets K's signature of it too (airlock.json.sig). Every other member is
 * copied byte for byte; a key that already signed the target adds nothing. Atomic (writeMembers):
 * the result is re-read before it replaces the delta.
 */
export async function addDeltaSignature(deltaPath: string, key: KeyObject, o: { full?: string; signal?: AbortSignal } = {}): Promise<DeltaSignResult> {
  const path = resolve(deltaPath);
  const l = await readDelta(path);
  const full = o.full ? resolve(o.full) : fullPath(dirname(path), l.manifest);
  // Only a name that is not there at all is "missing"; a FIFO, a folder, a device or a dangling link is refused by readPackage, in its words.
  if (
    !(await lstat(full).then(
      () => true,
      () => false,
    ))
  ) {
    throw new UsageError(`signing a delta signs its target manifest, read from the full package written beside it: ${full} is missing; pass --full FILE`, {
      subject: full,
    });
  }
  const target = await readPackage(full);
  if (sha256Hex(target.manifestBytes) !== l.manifest.target.manifestSha256) {
    throw new DigestMismatchError(
      'AIRLOCK_DELTA_TARGET',
      `${full} is not this delta's target: its manifest has sha256 ${sha256Hex(target.manifestBytes)}, the delta names ${l.manifest.target.manifestSha256}`,
      { subject: full },
    );
  }
  const pub = createPublicKey(key);
  const signer = fingerprint(pub);
  const have = l.target.signatures;
  const envelopeSigned = l.signature === null;
  if (signersOf({ manifestBytes: target.manifestBytes, signature: null, signatures: have }, [pub]).signers.length > 0 && !envelopeSigned) {
    return { path, added: false, signer, signatures: have.length, envelopeSigned: false, full };
  }
  if (have.length >= MAX_SIGNATURES)
    throw new MalformedError('AIRLOCK_TOO_MANY_SIGNATURES', `${path} already carries ${have.length} target signatures, the limit`, {
      subject: path,
      limit: MAX_SIGNATURES,
    });
  const already = signersOf({ manifestBytes: target.manifestBytes, signature: null, signatures: have }, [pub]).signers.length > 0;
  const added = already ? [] : [sign(null, target.manifestBytes, key)];

  const { fh, size } = await openFile(path, 'delta package');
  let members;
  try {
    members = await readMembers(fh, size, DELTA_ORDER, `delta package ${path}`);
  } finally {
    await fh.close();
  }
  const out: { name: string; body: MemberBody }[] = [];
  const copy = (name: string) => {
    const m = members.get(name);
    if (m) out.push({ name, body: { file: path, offset: m.offset, size: m.size } });
  };
  copy(M.manifest);
  if (envelopeSigned) out.push({ name: M.sig, body: { bytes: sign(null, l.manifestBytes, key) } });
  else copy(M.sig);
  copy(M.ops);
  copy(M.target);
  for (let i = 1; i <= have.length; i++) copy(targetSignatureMember(i));
  for (const [i, s] of added.entries()) out.push({ name: targetSignatureMember(have.length + i + 1), body: { bytes: s } });
  copy(M.payload);

  await writeMembers(path, out, new Date(Math.floor(Date.parse(l.manifest.createdAt) / 1000) * 1000), {
    replace: true,
    signal: o.signal,
    check: async (tmp) => {
      const again = await readDelta(tmp);
      if (
        !again.manifestBytes.equals(l.manifestBytes) ||
        again.target.signatures.length !== have.length + added.length ||
        again.payload.size !== l.payload.size
      ) {
        throw new MalformedError('AIRLOCK_PACKAGE_CHANGED', `${path} changed while it was being signed`, { subject: path });
      }
    },
  });
  return { path, added: added.length > 0, signer, signatures: have.length + added.length, envelopeSigned, full };
}
