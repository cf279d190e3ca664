import { copyFile, link, mkdir, open } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { spanStream, writeSmall } from '../archive/index.js';
import { dirname, join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { Transform } from 'node:stream';
import { createHash } from 'node:crypto';
import { applyFossilUnchecked, fossilChecksum, fossilTargetSize } from './fossil-apply.js';
import { DigestMismatchError, MalformedError, type ErrorCode } from '../errors.js';
import type { FileRecord } from '../archive/index.js';
import type { Manifest } from '../package/manifest.js';
import { DELTA_MEMBERS, MAX_PATCH_SOURCE, gunzipProblem, type DeltaOp } from './format.js';
import type { DeltaLayout } from './reader.js';
import { ExactReader } from './stream-reader.js';
import { ZERO_DIGEST } from './template.js';
import { inPool } from '../util/pool.js';
import { ReadAhead, readUpTo } from '../util/read-ahead.js';
import { constants as fsConstants } from 'node:fs';
import { fsyncFile } from '../util/fsx.js';
import { describeFsError } from '../util/fs-words.js';

/** Patches applied at once, and the largest base file such a patch may read (bigger ones run alone). */
const PATCH_WIDTH = 16;
const PATCH_BATCH_SOURCE = 4 * 1024 * 1024;
/** Base files read ahead of the patch being applied (count, and bytes beyond the first). */
const READ_AHEAD = { files: 32, bytes: 16 * 1024 * 1024 };

/** At most `width` promises in flight; the first failure is rethrown by add/drain, and settle waits for all. */
class Bounded {
  private readonly running = new Set<Promise<void>>();
  private failed: { err: unknown } | null = null;
  constructor(private readonly width: number) {}
  async add(p: Promise<void>): Promise<void> {
    const tracked = p
      .catch((err: unknown) => {
        this.failed ??= { err };
      })
      .finally(() => this.running.delete(tracked));
    this.running.add(tracked);
    if (this.running.size >= this.width) await Promise.race(this.running);
    if (this.failed) throw this.failed.err;
  }
  async drain(): Promise<void> {
    await this.settle();
    if (this.failed) throw this.failed.err;
  }
  async settle(): Promise<void> {
    await Promise.all(this.running);
  }
}

export interface RebuildInput {
  layout: DeltaLayout;
  target: Manifest;
  baseManifest: Manifest;
  baseSite: string;
  destSite: string;
  signal?: AbortSignal;
  /** The base files the patches read, already being read (readBaseAhead); rebuildSite settles it. */
  ahead?: ReadAhead;
}

/**
 * Start reading the base files the delta's patches read, in payload order, ahead of the patches
 * (only paths the base manifest lists, at most PATCH_BATCH_SOURCE each): a base imported days ago
 * is not in the page cache, and 3,000 cold reads one after another leave the disk idle between
 * them. The caller may start this as soon as the base is found, and must settle() it.
 */
export function readBaseAhead(layout: DeltaLayout, baseManifest: Manifest, baseSite: string): ReadAhead {
  const base = new Map(baseManifest.files.map((f) => [f.path, f]));
  return new ReadAhead(
    layout.manifest.ops.flatMap((op) => {
      const from = op.kind === 'patch' ? base.get(op.from) : undefined;
      return from && from.size <= PATCH_BATCH_SOURCE ? [{ path: join(baseSite, from.path), size: from.size }] : [];
    }),
    READ_AHEAD,
  );
}

const bad = (code: ErrorCode, message: string, subject: string) => new MalformedError(code, message, { subject });

/**
 * Build the target's site files under `destSite` (new, empty) from the base version's files and
 * the delta: files the delta does not mention are the base's at the same path (which must be
 * listed there with the target's digest), `copy` takes another base file, `patch` applies a fossil
 * delta to one, `whole` takes payload bytes. Writes only at target manifest paths; reads only base
 * manifest paths. Every file it writes is fsynced before it is closed (the caller fsyncs the
 * folders). Returns every target file's sha256 as built (the base's recorded digest for files
 * taken from it): finishTarget checks them against the target manifest, or fills its template;
 * and each patch's declared checksum, compared only when that check fails (namePatchThatFailed).
 */
export async function rebuildSite(o: RebuildInput): Promise<Rebuilt> {
  const { layout, baseManifest } = o;
  const base = new Map(baseManifest.files.map((f) => [f.path, f]));
  const ops = new Map<string, DeltaOp>(layout.manifest.ops.map((op) => [op.path, op]));
  const target = o.target.files;
  const targetPaths = new Set(target.map((f) => f.path));
  const removed = baseManifest.files.filter((f) => !targetPaths.has(f.path)).map((f) => f.path);
  if (removed.length !== layout.manifest.removed.length || removed.some((p, i) => p !== layout.manifest.removed[i])) {
    throw bad(
      'AIRLOCK_BAD_DELTA',
      `the delta's removed list does not match what the base ${layout.manifest.base.version} has and the target lacks`,
      DELTA_MEMBERS.manifest,
    );
  }
  const fromBase = (path: string, subject: string): FileRecord => {
    const f = base.get(path);
    if (!f)
      throw bad('AIRLOCK_BAD_DELTA', `the delta builds ${JSON.stringify(subject)} from ${JSON.stringify(path)}, which the base version does not have`, subject);
    return f;
  };
  // One mkdir per folder, shared by the patches running at once (a set filled after the await let
  // sixteen of them create the same folder: 700 redundant mkdir and stat trips for 3,000 pages).
  const dirs = new Map<string, Promise<unknown>>();
  const place = async (path: string): Promise<string> => {
    const dest = join(o.destSite, path);
    const d = dirname(dest);
    let made = dirs.get(d);
    if (!made) dirs.set(d, (made = mkdir(d, { recursive: true })));
    await made;
    return dest;
  };
  const byPath = new Map(target.map((f) => [f.path, f]));
  // 1. Files from the base: unchanged ones and copies (checked first, then linked 16 at a time).
  const copies: [string, string][] = [];
  const digests = new Map<string, string>();
  for (const f of target) {
    o.signal?.throwIfAborted();
    const op = ops.get(f.path);
    if (op && op.kind !== 'copy') continue;
    const src = op ? fromBase(op.from, f.path) : fromBase(f.path, f.path);
    if (!op && (src.size !== f.size || (f.sha256 !== ZERO_DIGEST && src.sha256 !== f.sha256))) {
      throw bad('AIRLOCK_BAD_DELTA', `the delta does not say how to build ${JSON.stringify(f.path)} (the base's file differs)`, f.path);
    }
    copies.push([join(o.baseSite, src.path), await place(f.path)]);
    digests.set(f.path, src.sha256);
  }
  await inPool(copies, async ([from, to]) => {
    o.signal?.throwIfAborted();
    // Versions are immutable once committed, so a hard link shares the base's bytes safely (a
    // later prune of the base only drops one name); file systems without links get a copy.
    await link(from, to).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPERM' && err.code !== 'EXDEV' && err.code !== 'ENOTSUP' && err.code !== 'EOPNOTSUPP' && err.code !== 'EMLINK' && err.code !== 'ENOSYS')
        throw err;
      await copyFile(from, to, fsConstants.COPYFILE_EXCL);
      await fsyncFile(to); // a link shares the base's durable inode; a copy is new bytes
    });
  });
  // 2. Patches and whole files, in payload order.
  const payloadHash = createHash('sha256');
  const tap = new Transform({
    transform(c: Buffer, _e, cb) {
      payloadHash.update(c);
      cb(null, c);
    },
  });
  const { offset, size } = layout.payload;
  const src = layout.spans
    ? spanStream(layout.spans, offset, size)
    : createReadStream(layout.path, { start: offset, end: offset + size - 1, highWaterMark: 1 << 20 });
  const gunzip = createGunzip();
  const onErr = (e: Error) => gunzip.destroy(e);
  src.on('error', onErr);
  const raw = size === 0 ? null : src.pipe(tap).pipe(gunzip);
  const reader = raw ? new ExactReader(raw, layout.manifest.payload.expandedSize, DELTA_MEMBERS.payload) : null;
  const ahead = o.ahead ?? readBaseAhead(layout, baseManifest, o.baseSite);
  const patched: Patched = new Map();
  const applyPatch = async (path: string, from: FileRecord, patch: Buffer, size: number): Promise<void> => {
    let out: Buffer;
    try {
      if (fossilTargetSize(patch) !== size) throw new Error(`it yields ${fossilTargetSize(patch)} bytes, the target manifest says ${size}`);
      const source = join(o.baseSite, from.path);
      const applied = applyFossilUnchecked(
        await (from.size <= PATCH_BATCH_SOURCE ? ahead.take(source, from.size) : readUpTo(source, from.size + 1)),
        patch,
        size,
      );
      out = applied.out;
      patched.set(path, { from: from.path, size, checksum: applied.checksum });
    } catch (err) {
      // A base file that cannot be read (the store damaged by hand) is said in words; anything else is the patch's own words.
      const why = typeof (err as NodeJS.ErrnoException).code === 'string' ? `the base's file ${describeFsError(err)}` : (err as Error).message;
      throw new DigestMismatchError('AIRLOCK_DELTA_PATCH', `the patch for ${path} does not apply to the base's ${from.path}: ${why}`, { subject: path });
    }
    await writeSmall(await place(path), [out], out.length); // durable before close: the caller then fsyncs only the folders
    const sha256 = createHash('sha256').update(out).digest('hex');
    digests.set(path, sha256);
  };
  const inFlight = new Bounded(PATCH_WIDTH);
  try {
    for (const op of layout.manifest.ops) {
      o.signal?.throwIfAborted();
      if (op.kind === 'copy') continue;
      if (!reader) throw bad('AIRLOCK_DELTA_PAYLOAD', 'payload.gz is empty but the delta has patches or whole files', DELTA_MEMBERS.payload);
      const want = byPath.get(op.path)!;
      if (op.kind === 'whole') {
        if (op.length !== want.size)
          throw new DigestMismatchError('AIRLOCK_SIZE_MISMATCH', `${op.path} is ${op.length} bytes in the delta but the target manifest says ${want.size}`, {
            subject: op.path,
          });
        const fh = await open(await place(op.path), 'wx');
        const h = createHash('sha256');
        try {
          await reader.pipe(op.length, async (c) => {
            h.update(c);
            let d = 0;
            while (d < c.length) d += (await fh.write(c, d, c.length - d)).bytesWritten;
          });
          await fh.sync();
        } finally {
          await fh.close();
        }
        digests.set(op.path, h.digest('hex'));
        continue;
      }
      const from = fromBase(op.from, op.path);
      if (op.length > MAX_PATCH_SOURCE || from.size > MAX_PATCH_SOURCE || want.size > MAX_PATCH_SOURCE) {
        throw bad('AIRLOCK_BAD_DELTA', `the patch for ${JSON.stringify(op.path)} is beyond the ${MAX_PATCH_SOURCE}-byte patch limit`, op.path);
      }
      const patch = await reader.read(op.length);
      // Applying and writing overlap (base reads and small writes wait on the disk, not the CPU),
      // at most PATCH_WIDTH at a time and only for sources of at most PATCH_BATCH_SOURCE bytes.
      const task = applyPatch(op.path, from, patch, want.size);
      if (from.size > PATCH_BATCH_SOURCE) await task;
      else await inFlight.add(task);
    }
    await inFlight.drain();
    if (reader) await reader.end();
  } catch (err) {
    const why = gunzipProblem(err);
    if (why !== null) throw bad('AIRLOCK_DELTA_PAYLOAD', `payload.gz ${why}`, DELTA_MEMBERS.payload);
    throw err;
  } finally {
    await inFlight.settle(); // nothing may still write into the site when the caller removes it
    await ahead.settle();
    src.destroy();
    gunzip.destroy();
  }
  if (raw && payloadHash.digest('hex') !== layout.manifest.payload.sha256) {
    throw new DigestMismatchError('AIRLOCK_DIGEST_MISMATCH', `payload.gz does not have the sha256 its delta manifest names`, {
      subject: DELTA_MEMBERS.payload,
    });
  }
  return { digests, patched };
}

/** Each patched file's base file, size and the fossil checksum its patch declares for the output. */
export type Patched = Map<string, { from: string; size: number; checksum: number }>;
/** What rebuildSite built: every target file's sha256, and what namePatchThatFailed needs. */
export interface Rebuilt {
  digests: Map<string, string>;
  patched: Patched;
}

/**
 * After the rebuilt files failed the target manifest: a patched file whose bytes do not have the
 * checksum its patch declares, as the refusal naming that patch
 * (AIRLOCK_DELTA_PATCH), or null. The checksums are compared only here, on the way to a refusal,
 * not for every patch applied (the target's digests check every file anyway).
 */
export async function namePatchThatFailed(destSite: string, patched: Patched): Promise<DigestMismatchError | null> {
  for (const [path, p] of patched) {
    const bytes = await readUpTo(join(destSite, path), p.size + 1);
    if (bytes.length !== p.size || fossilChecksum(bytes) !== p.checksum) {
      return new DigestMismatchError(
        'AIRLOCK_DELTA_PATCH',
        `the patch for ${path} does not apply to the base's ${p.from}: its output does not match its checksum`,
        { subject: path },
      );
    }
  }
  return null;
}
