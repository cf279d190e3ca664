import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Header, Pax } from 'tar';
import { DigestMismatchError } from '../../errors.js';
import type { FileRecord } from '../../archive/index.js';
import { BLOCK, MIN_TAIL, encodeHeader, padded } from '../tar-header.js';
import { signatureMember } from '../reader.js';

/**
 * The canonical form of a site as a plain tar, a pure function of (files, mtime): entries in
 * manifest order (byte order of paths), files only, mode 0644, uid/gid 0, no user names, the
 * manifest's createdAt as mtime, a pax record only for a path ustar cannot hold. A delta's target
 * carries this `bundle.tar` (not the service's tar.gz, whose compressor output cannot be
 * reproduced), so the receiving side rebuilds the target package byte for byte from the site
 * files alone and checks it against the signed target manifest.
 */
export const CANONICAL_ARCHIVE = 'bundle.tar';

export function entryHeader(path: string, size: number, mtime: Date): Buffer {
  const fields = { path, mode: 0o644, uid: 0, gid: 0, size, mtime, type: 'File' as const };
  const block = Buffer.alloc(BLOCK);
  const needPax = new Header(fields).encode(block, 0);
  if (!needPax) return block;
  const pax = new Pax({ path, size, mtime }).encode();
  const short = Buffer.alloc(BLOCK);
  new Header({ ...fields, path: path.slice(-90).replace(/^\/+/, '') || 'file' }).encode(short, 0);
  return Buffer.concat([pax, short]);
}

export function canonicalTarSize(files: readonly Pick<FileRecord, 'path' | 'size'>[], mtime: Date): number {
  let n = MIN_TAIL;
  for (const f of files) n += entryHeader(f.path, f.size, mtime).length + padded(f.size);
  return n;
}

/**
 * A sequential writer that hashes what it writes (the whole output, and one member on demand).
 * Small writes are gathered and written 1 MiB at a time: call flush() before syncing or closing.
 */
export class HashingOut {
  readonly whole = createHash('sha256');
  member: Hash | null = null;
  bytes = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** `at`: write from this file offset on (default: the file's current position). */
  constructor(private readonly fh: FileHandle, private at: number | null = null) {}
  async write(buf: Buffer): Promise<void> {
    this.whole.update(buf);
    this.member?.update(buf);
    this.bytes += buf.length;
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    if (this.pendingBytes >= FLUSH_AT) await this.flush();
  }
  async flush(): Promise<void> {
    const bufs = this.pending;
    const total = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    if (total === 0) return;
    // One gathered write, without copying the pieces together; a short write (or more pieces
    // than the system takes at once) finishes with plain writes of what is left.
    const done = (await this.fh.writev(bufs, this.at ?? undefined)).bytesWritten;
    if (done < total) {
      const rest = Buffer.concat(bufs).subarray(done);
      for (let off = 0; off < rest.length;) {
        const n = (await this.fh.write(rest, off, rest.length - off, this.at === null ? null : this.at + done + off)).bytesWritten;
        off += n;
      }
    }
    if (this.at !== null) this.at += total;
  }
}

const FLUSH_AT = 1 << 20;
/** Files up to this size are read whole, READ_AHEAD of them at a time; larger ones are streamed. */
const SMALL_FILE = 1 << 20;
const READ_AHEAD = 16;

/** A file's first `size + 1` bytes at most (one more than promised shows a file that grew). */
async function readSmall(path: string, size: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(size + 1);
    let total = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, total, buf.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total === buf.length) break;
    }
    return buf.subarray(0, total);
  } finally {
    await fh.close();
  }
}

function checkRead(f: FileRecord, total: number, digest: string): void {
  if (total !== f.size || digest !== f.sha256) {
    throw new DigestMismatchError('AIRLOCK_DIGEST_MISMATCH', `${f.path} is ${total} bytes with sha256 ${digest} but the manifest says ${f.size} bytes, ${f.sha256}`, { subject: f.path });
  }
}

/**
 * Append the canonical tar of `siteDir` (the files of `files`), each file hashed as it is written
 * and checked against its size and sha256 in `files` — or, with `onDigest`, reported there for the
 * caller to check. Small files are read READ_AHEAD ahead, so the disk and the hashing overlap.
 */
export async function writeCanonicalTar(out: HashingOut, siteDir: string, files: readonly FileRecord[], mtime: Date, signal?: AbortSignal,
  onDigest: (f: FileRecord, size: number, sha256: string) => void = checkRead): Promise<void> {
  const ahead = new Map<number, Promise<Buffer | null>>();
  let next = 0;
  const fill = (upTo: number) => {
    for (; next < Math.min(files.length, upTo); next++) {
      const f = files[next]!;
      const p = f.size > SMALL_FILE ? Promise.resolve(null) : readSmall(join(siteDir, f.path), f.size);
      p.catch(() => {}); // awaited in order below; a failure ahead of its turn is not unhandled
      ahead.set(next, p);
    }
  };
  let buf: Buffer | null = null;
  for (const [i, f] of files.entries()) {
    signal?.throwIfAborted();
    fill(i + READ_AHEAD);
    await out.write(entryHeader(f.path, f.size, mtime));
    const body = await ahead.get(i)!;
    ahead.delete(i);
    if (body) {
      onDigest(f, body.length, createHash('sha256').update(body).digest('hex'));
      await out.write(body);
    } else {
      buf ??= Buffer.allocUnsafe(1 << 20);
      const fh = await open(join(siteDir, f.path), 'r');
      const h = createHash('sha256');
      let total = 0;
      try {
        for (;;) {
          const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, f.size - total + 1), null);
          if (bytesRead === 0) break;
          total += bytesRead;
          if (total > f.size) break;
          const chunk = Buffer.from(buf.subarray(0, bytesRead)); // a copy: the writer may hold it until its next flush
          h.update(chunk);
          await out.write(chunk);
        }
      } finally {
        await fh.close();
      }
      onDigest(f, total, h.digest('hex'));
    }
    if (padded(f.size) > f.size) await out.write(Buffer.alloc(padded(f.size) - f.size));
  }
  await out.write(Buffer.alloc(MIN_TAIL));
}

async function writeAt(fh: FileHandle, buf: Buffer, position: number): Promise<void> {
  for (let done = 0; done < buf.length;) done += (await fh.write(buf, done, buf.length - done, position + done)).bytesWritten;
}

export interface CanonicalPackage { packageSha256: string; archiveSha256: string; archiveOffset: number; archiveSize: number; size: number }

/** Where the canonical package's bundle.tar starts: after the manifest, the signatures and its own header. */
export function canonicalArchiveOffset(manifestLength: number, signatures: readonly Buffer[]): number {
  return BLOCK + padded(manifestLength) + signatures.reduce((n, sig) => n + BLOCK + padded(sig.length), 0) + BLOCK;
}

export interface CanonicalPackageWriter {
  /** Start writing the canonical tar of `siteDir` in place, after the head (which waits for the final manifest). */
  start(siteDir: string, signal?: AbortSignal): void;
  /**
   * Once the tar is written: check every file against the final manifest's size and sha256, write
   * the head (the final manifest's exact bytes, which must have the length given at open), hash the
   * whole package and fsync it.
   */
  finish(manifestBytes: Buffer, files: readonly FileRecord[]): Promise<CanonicalPackage>;
  /** Stop (after a failure elsewhere): waits for the tar writer to settle and closes the file; the caller removes it. */
  abort(): Promise<void>;
}

/**
 * A full package whose archive is the canonical bundle.tar of a site: the same bytes
 * src/package/writer.ts writes for that manifest and archive (members airlock.json,
 * airlock.json.sig…, bundle.tar, end blocks; mtime = createdAt). The tar is written at its offset
 * and the head last, with the final manifest (its size is known first: a digest template has the
 * final length). The file is created exclusively; the caller owns its name (a temporary one).
 */
export async function openCanonicalPackage(o: { outPath: string; manifestLength: number; signatures: readonly Buffer[]; createdAt: string; files: readonly FileRecord[] }): Promise<CanonicalPackageWriter> {
  const mtime = new Date(Math.floor(Date.parse(o.createdAt) / 1000) * 1000);
  const archiveSize = canonicalTarSize(o.files, mtime);
  const archiveOffset = canonicalArchiveOffset(o.manifestLength, o.signatures);
  const fh = await open(o.outPath, 'wx+', 0o644); // read back for the package's digest
  const out = new HashingOut(fh, archiveOffset); // its `whole` hash is the archive's
  const seen = new Map<string, { size: number; sha256: string }>();
  let tar: Promise<void> | null = null;
  const stop = new AbortController();
  return {
    start(siteDir, signal) {
      tar = writeCanonicalTar(out, siteDir, o.files, mtime, signal ? AbortSignal.any([signal, stop.signal]) : stop.signal, (f, size, sha256) => { seen.set(f.path, { size, sha256 }); }).then(() => out.flush());
      tar.catch(() => {}); // awaited by finish or abort
    },
    async finish(manifestBytes, files) {
      try {
        await tar;
        for (const f of files) checkRead(f, seen.get(f.path)?.size ?? -1, seen.get(f.path)?.sha256 ?? '');
        if (out.bytes !== archiveSize || manifestBytes.length !== o.manifestLength || files.length !== o.files.length) {
          throw new Error(`canonical package layout: tar ${out.bytes} of ${archiveSize} bytes, manifest ${manifestBytes.length} of ${o.manifestLength}`);
        }
        const head: Buffer[] = [];
        const member = (name: string, body: Buffer) => head.push(encodeHeader(name, body.length, mtime), body, Buffer.alloc(padded(body.length) - body.length));
        member('airlock.json', manifestBytes);
        for (const [i, sig] of o.signatures.entries()) member(signatureMember(i + 1), sig);
        head.push(encodeHeader(CANONICAL_ARCHIVE, archiveSize, mtime));
        const headBytes = Buffer.concat(head);
        const tail = Buffer.alloc(padded(archiveSize) - archiveSize + MIN_TAIL);
        await writeAt(fh, headBytes, 0);
        await writeAt(fh, tail, archiveOffset + archiveSize);
        const size = archiveOffset + archiveSize + tail.length;
        // The package's own digest covers the head, known only now: one read of what was just written (page cache).
        const whole = createHash('sha256').update(headBytes);
        const buf = Buffer.allocUnsafe(1 << 20);
        for (let at = archiveOffset; at < size;) {
          const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - at), at);
          if (bytesRead === 0) throw new Error(`canonical package shorter than ${size} bytes`);
          whole.update(buf.subarray(0, bytesRead));
          at += bytesRead;
        }
        await fh.sync();
        return { packageSha256: whole.digest('hex'), archiveSha256: out.whole.digest('hex'), archiveOffset, archiveSize, size };
      } finally {
        await fh.close();
      }
    },
    async abort() {
      stop.abort();
      await tar?.catch(() => {});
      await fh.close().catch(() => {});
    },
  };
}
