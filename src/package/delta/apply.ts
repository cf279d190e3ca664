import { copyFile, link, mkdir, open, readFile } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { Transform } from 'node:stream';
import { createHash } from 'node:crypto';
import { applyDelta, getDeltaTargetSize } from 'fossil-delta';
import { DigestMismatchError, MalformedError } from '../../errors.js';
import type { FileRecord } from '../../archive/index.js';
import type { Manifest } from '../manifest.js';
import { DELTA_MEMBERS, MAX_PATCH_SOURCE, type DeltaOp } from './format.js';
import type { DeltaLayout } from './reader.js';
import { ExactReader } from './stream-reader.js';
import { inPool } from './pool.js';
import { constants as fsConstants } from 'node:fs';

export interface RebuildInput { layout: DeltaLayout; target: Manifest; baseManifest: Manifest; baseSite: string; destSite: string; signal?: AbortSignal }

const bad = (code: string, message: string, subject: string) => new MalformedError(code, message, { subject });

/**
 * Build the target's site files under `destSite` (new, empty) from the base version's files and
 * the delta: files the delta does not mention are the base's at the same path (which must be
 * listed there with the target's digest), `copy` takes another base file, `patch` applies a fossil
 * delta to one, `whole` takes payload bytes. Writes only at target manifest paths; reads only base
 * manifest paths. Each file's digest is checked later, when the canonical package is written from
 * them (writeCanonicalPackage), against the signed target manifest.
 */
export async function rebuildSite(o: RebuildInput): Promise<void> {
  const { layout, baseManifest } = o;
  const base = new Map(baseManifest.files.map((f) => [f.path, f]));
  const ops = new Map<string, DeltaOp>(layout.manifest.ops.map((op) => [op.path, op]));
  const target = o.target.files;
  const targetPaths = new Set(target.map((f) => f.path));
  const removed = baseManifest.files.filter((f) => !targetPaths.has(f.path)).map((f) => f.path);
  if (removed.length !== layout.manifest.removed.length || removed.some((p, i) => p !== layout.manifest.removed[i])) {
    throw bad('AIRLOCK_BAD_DELTA', `the delta's removed list does not match what the base ${layout.manifest.base.version} has and the target lacks`, DELTA_MEMBERS.manifest);
  }
  const fromBase = (path: string, subject: string): FileRecord => {
    const f = base.get(path);
    if (!f) throw bad('AIRLOCK_BAD_DELTA', `the delta builds ${JSON.stringify(subject)} from ${JSON.stringify(path)}, which the base version does not have`, subject);
    return f;
  };
  const dirs = new Set<string>();
  const place = async (path: string): Promise<string> => {
    const dest = join(o.destSite, path);
    const d = dirname(dest);
    if (!dirs.has(d)) { await mkdir(d, { recursive: true }); dirs.add(d); }
    return dest;
  };
  const byPath = new Map(target.map((f) => [f.path, f]));
  // 1. Files from the base: unchanged ones and copies (checked first, then linked 16 at a time).
  const copies: [string, string][] = [];
  for (const f of target) {
    o.signal?.throwIfAborted();
    const op = ops.get(f.path);
    if (op && op.kind !== 'copy') continue;
    const src = op ? fromBase(op.from, f.path) : fromBase(f.path, f.path);
    if (!op && (src.sha256 !== f.sha256 || src.size !== f.size)) {
      throw bad('AIRLOCK_BAD_DELTA', `the delta does not say how to build ${JSON.stringify(f.path)} (the base's file differs)`, f.path);
    }
    copies.push([join(o.baseSite, src.path), await place(f.path)]);
  }
  await inPool(copies, async ([from, to]) => {
    o.signal?.throwIfAborted();
    // Versions are immutable once committed, so a hard link shares the base's bytes safely (a
    // later prune of the base only drops one name); file systems without links get a copy.
    await link(from, to).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPERM' && err.code !== 'EXDEV' && err.code !== 'ENOTSUP' && err.code !== 'EOPNOTSUPP' && err.code !== 'EMLINK' && err.code !== 'ENOSYS') throw err;
      await copyFile(from, to, fsConstants.COPYFILE_EXCL);
    });
  });
  // 2. Patches and whole files, in payload order.
  const payloadHash = createHash('sha256');
  const tap = new Transform({ transform(c: Buffer, _e, cb) { payloadHash.update(c); cb(null, c); } });
  const { offset, size } = layout.payload;
  const src = createReadStream(layout.path, { start: offset, end: offset + size - 1, highWaterMark: 1 << 20 });
  const gunzip = createGunzip();
  const onErr = (e: Error) => gunzip.destroy(e);
  src.on('error', onErr);
  const raw = size === 0 ? null : src.pipe(tap).pipe(gunzip);
  const reader = raw ? new ExactReader(raw, layout.manifest.payload.expandedSize, DELTA_MEMBERS.payload) : null;
  try {
    for (const op of layout.manifest.ops) {
      o.signal?.throwIfAborted();
      if (op.kind === 'copy') continue;
      if (!reader) throw bad('AIRLOCK_DELTA_PAYLOAD', 'payload.gz is empty but the delta has patches or whole files', DELTA_MEMBERS.payload);
      const want = byPath.get(op.path)!;
      if (op.kind === 'whole') {
        if (op.length !== want.size) throw new DigestMismatchError('AIRLOCK_SIZE_MISMATCH', `${op.path} is ${op.length} bytes in the delta but the target manifest says ${want.size}`, { subject: op.path });
        const fh = await open(await place(op.path), 'wx');
        try {
          await reader.pipe(op.length, async (c) => { let d = 0; while (d < c.length) d += (await fh.write(c, d, c.length - d)).bytesWritten; });
        } finally {
          await fh.close();
        }
        continue;
      }
      const from = fromBase(op.from, op.path);
      if (op.length > MAX_PATCH_SOURCE || from.size > MAX_PATCH_SOURCE || want.size > MAX_PATCH_SOURCE) {
        throw bad('AIRLOCK_BAD_DELTA', `the patch for ${JSON.stringify(op.path)} is beyond the ${MAX_PATCH_SOURCE}-byte patch limit`, op.path);
      }
      const patch = await reader.read(op.length);
      let out: Uint8Array;
      try {
        if (getDeltaTargetSize(patch) !== want.size) throw new Error(`it yields ${getDeltaTargetSize(patch)} bytes, the target manifest says ${want.size}`);
        out = applyDelta(new Uint8Array(await readFile(join(o.baseSite, from.path))), new Uint8Array(patch), { verifyChecksum: true });
      } catch (err) {
        throw new DigestMismatchError('AIRLOCK_DELTA_PATCH', `the patch for ${op.path} does not apply to the base's ${from.path}: ${(err as Error).message}`, { subject: op.path });
      }
      const fh = await open(await place(op.path), 'wx');
      try {
        await fh.writeFile(out);
      } finally {
        await fh.close();
      }
    }
    if (reader) await reader.end();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code?.startsWith?.('Z_')) throw bad('AIRLOCK_DELTA_PAYLOAD', `payload.gz is not a valid gzip stream: ${(err as Error).message}`, DELTA_MEMBERS.payload);
    throw err;
  } finally {
    src.destroy();
    gunzip.destroy();
  }
  if (raw && payloadHash.digest('hex') !== layout.manifest.payload.sha256) {
    throw new DigestMismatchError('AIRLOCK_DIGEST_MISMATCH', `payload.gz does not have the sha256 its delta manifest names`, { subject: DELTA_MEMBERS.payload });
  }
}
