import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Header, Pax } from 'tar';
import { DigestMismatchError } from '../errors.js';
import type { FileRecord } from '../archive/index.js';
import { BLOCK, MIN_TAIL, encodeHeader, padded } from '../package/tar-header.js';
import { signatureMember } from '../package/reader.js';
import { ReadAhead } from '../util/read-ahead.js';

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
  constructor(private readonly fh: FileHandle) {}
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
    const done = (await this.fh.writev(bufs)).bytesWritten;
    if (done < total) {
      const rest = Buffer.concat(bufs).subarray(done);
      for (let off = 0; off < rest.length;) off += (await this.fh.write(rest, off, rest.length - off)).bytesWritten;
    }
  }
}

const FLUSH_AT = 1 << 20;
/** Files up to this size are read whole, up to READ_AHEAD ahead; larger ones are streamed. */
const SMALL_FILE = 1 << 20;
const READ_AHEAD = { files: 16, bytes: 16 * SMALL_FILE, blocking: false }; // it runs in the mirror's server: no blocking open

function checkRead(f: FileRecord, total: number, digest: string): void {
  if (total !== f.size || digest !== f.sha256) {
    throw new DigestMismatchError(
      'AIRLOCK_DIGEST_MISMATCH',
      `${f.path} is ${total} bytes with sha256 ${digest} but the manifest says ${f.size} bytes, ${f.sha256}`,
      { subject: f.path },
    );
  }
}

/**
 * Append the canonical tar of `siteDir` (the files of `files`, each checked for its size and
 * sha256 as it is read). Small files are read READ_AHEAD ahead, so the disk and the hashing overlap.
 */
export async function writeCanonicalTar(out: HashingOut, siteDir: string, files: readonly FileRecord[], mtime: Date, signal?: AbortSignal): Promise<void> {
  const ahead = new ReadAhead(
    files.filter((f) => f.size <= SMALL_FILE).map((f) => ({ path: join(siteDir, f.path), size: f.size })),
    READ_AHEAD,
  );
  let buf: Buffer | null = null;
  try {
    for (const f of files) {
      signal?.throwIfAborted();
      await out.write(entryHeader(f.path, f.size, mtime));
      const body = f.size <= SMALL_FILE ? await ahead.take(join(siteDir, f.path), f.size) : null;
      if (body) {
        checkRead(f, body.length, createHash('sha256').update(body).digest('hex'));
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
        checkRead(f, total, h.digest('hex'));
      }
      if (padded(f.size) > f.size) await out.write(Buffer.alloc(padded(f.size) - f.size));
    }
  } finally {
    await ahead.settle();
  }
  await out.write(Buffer.alloc(MIN_TAIL));
}

export interface CanonicalPackage {
  packageSha256: string;
  archiveSha256: string;
  archiveOffset: number;
  archiveSize: number;
  size: number;
}

/** Where the canonical package's bundle.tar starts: after the manifest, the signatures and its own header. */
export function canonicalArchiveOffset(manifestLength: number, signatures: readonly Buffer[]): number {
  return BLOCK + padded(manifestLength) + signatures.reduce((n, sig) => n + BLOCK + padded(sig.length), 0) + BLOCK;
}

/**
 * Write a full package whose archive is the canonical bundle.tar of `siteDir`, with the given exact
 * manifest bytes and signatures: the same bytes src/package/writer.ts writes for that manifest and
 * archive (members airlock.json, airlock.json.sig…, bundle.tar, end blocks; mtime = createdAt), in
 * one pass that hashes the package and its archive, into `fh` from its start. The caller owns the
 * file: a temp file of util/fsx writeDurably, which syncs it and gives it its name.
 */
export async function writeCanonicalPackage(
  fh: FileHandle,
  o: { manifestBytes: Buffer; signatures: readonly Buffer[]; createdAt: string; siteDir: string; files: readonly FileRecord[]; signal?: AbortSignal },
): Promise<CanonicalPackage> {
  const mtime = new Date(Math.floor(Date.parse(o.createdAt) / 1000) * 1000);
  const out = new HashingOut(fh);
  const member = async (name: string, body: Buffer) => {
    await out.write(encodeHeader(name, body.length, mtime));
    await out.write(body);
    if (padded(body.length) > body.length) await out.write(Buffer.alloc(padded(body.length) - body.length));
  };
  await member('airlock.json', o.manifestBytes);
  for (const [i, sig] of o.signatures.entries()) await member(signatureMember(i + 1), sig);
  const archiveSize = canonicalTarSize(o.files, mtime);
  await out.write(encodeHeader(CANONICAL_ARCHIVE, archiveSize, mtime));
  const archiveOffset = out.bytes;
  out.member = createHash('sha256');
  await writeCanonicalTar(out, o.siteDir, o.files, mtime, o.signal);
  const archiveSha256 = out.member.digest('hex');
  out.member = null;
  if (out.bytes - archiveOffset !== archiveSize) throw new Error(`canonical tar size ${out.bytes - archiveOffset} != ${archiveSize}`);
  await out.write(Buffer.alloc(padded(archiveSize) - archiveSize + MIN_TAIL));
  await out.flush();
  return { packageSha256: out.whole.digest('hex'), archiveSha256, archiveOffset, archiveSize, size: out.bytes };
}
