import { sign, type KeyObject } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { createDelta } from 'fossil-delta';
import { encodeDeltaManifest, readDelta, type DeltaManifest, type DeltaOp } from '../../src/delta/index.js';
import { writeMembers } from '../../src/delta/write.js';

/**
 * Test helper: rewrite a real delta package with changed operations / payload / manifest fields,
 * re-signing the delta manifest with `key` (or leaving it unsigned) while the target manifest and
 * its signature stay the real ones (a `targetBytes` replacement travels inline): what an attacker who controls the delta (not the target's key) can do.
 */
export async function craftDelta(
  from: string,
  outPath: string,
  o: {
    key?: KeyObject;
    blobs?: Buffer[];
    ops?: (ops: DeltaOp[], blobs: Buffer[]) => DeltaOp[];
    edit?: (m: DeltaManifest) => void;
    targetBytes?: Buffer;
    baseBytes?: Buffer;
    targetSig?: Buffer | null;
  } = {},
): Promise<string> {
  const l = await readDelta(from);
  const { readFile } = await import('node:fs/promises');
  const { gunzipSync } = await import('node:zlib');
  const raw = (await readFile(from)).subarray(l.payload.offset, l.payload.offset + l.payload.size);
  const expanded = l.payload.size ? gunzipSync(raw) : Buffer.alloc(0);
  const blobs: Buffer[] =
    o.blobs ??
    l.manifest.ops
      .filter((op) => op.kind !== 'copy')
      .map((op) => expanded.subarray((op as { offset: number }).offset, (op as { offset: number }).offset + (op as { length: number }).length));
  const ops = o.ops ? o.ops(structuredClone(l.manifest.ops), blobs) : l.manifest.ops;
  const payload = gzipSync(Buffer.concat(blobs));
  const { createHash } = await import('node:crypto');
  const m: DeltaManifest = {
    ...l.manifest,
    ops,
    payload: { size: payload.length, sha256: createHash('sha256').update(payload).digest('hex'), expandedSize: blobs.reduce((n, b) => n + b.length, 0) },
  };
  if (o.targetBytes) m.target = { ...m.target, digests: 'inline' };
  o.edit?.(m);
  const { manifestBytes: bytes, opsGz } = encodeDeltaManifest(m);
  const members: { name: string; body: { bytes: Buffer } }[] = [{ name: 'airlock.json', body: { bytes } }];
  if (o.key) members.push({ name: 'airlock.json.sig', body: { bytes: sign(null, bytes, o.key) } });
  members.push({ name: 'ops.json.gz', body: { bytes: opsGz } });
  const targetPatch =
    o.targetBytes && o.baseBytes ? gzipSync(Buffer.from(createDelta(new Uint8Array(o.baseBytes), new Uint8Array(o.targetBytes)))) : l.target.patch;
  members.push({ name: 'target.json.gz', body: { bytes: targetPatch } });
  const tsigs = o.targetSig === undefined ? l.target.signatures : o.targetSig ? [o.targetSig] : [];
  tsigs.forEach((t, i) => members.push({ name: i === 0 ? 'target.json.sig' : `target.json.sig.${i + 1}`, body: { bytes: t } }));
  members.push({ name: 'payload.gz', body: { bytes: payload } });
  await writeMembers(outPath, members, new Date('2025-01-15T12:00:00Z'));
  return outPath;
}

/** Re-point the blobs of `ops` at contiguous offsets in order. */
export function relayout(ops: DeltaOp[]): DeltaOp[] {
  let offset = 0;
  return ops.map((op) => {
    if (op.kind === 'copy') return op;
    const r = { ...op, offset };
    offset += op.length;
    return r;
  });
}
