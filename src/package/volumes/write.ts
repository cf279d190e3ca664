import { createHash, sign, type KeyObject } from 'node:crypto';
import { access, open, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MalformedError } from '../../errors.js';
import { fsyncDir, tempSibling } from '../../util/fsx.js';
import { MAX_MANIFEST_BYTES } from '../reader.js';
import { BLOCK, decodeHeader, padded } from '../tar-header.js';
import { outputExists, publishNew } from '../writer.js';
import { MAX_NAME, SIGNATURE_BYTES, TABLE_FORMAT, encodeFixed, encodeTable, tableRoom, volumeName, type VolumeTable } from './format.js';
import { planVolumes } from './plan.js';

const CHUNK = 1024 * 1024;
const ZERO = Buffer.alloc(CHUNK);

export interface SplitResult {
  volumes: string[];
  count: number;
  volumeBytes: number;
  packageId: string;
}

interface Reader {
  read(b: Buffer, o: number, l: number, p: number): Promise<{ bytesRead: number }>;
}

export async function readExactAt(fh: Reader, pos: number, n: number, subject: string): Promise<Buffer> {
  const buf = Buffer.alloc(n);
  let done = 0;
  while (done < n) {
    const { bytesRead } = await fh.read(buf, done, n - done, pos + done);
    if (bytesRead === 0) throw new MalformedError('AIRLOCK_TRUNCATED', `${subject} is truncated`, { subject });
    done += bytesRead;
  }
  return buf;
}

/** The package id: sha256 of the first member, airlock.json (of a full or a delta package). */
export async function packageIdOf(fh: Reader, subject: string): Promise<string> {
  return createHash('sha256')
    .update((await headMembers(fh, subject)).manifest)
    .digest('hex');
}

/** The first member (airlock.json) of a full or delta package and its optional airlock.json.sig: bounded reads of the head only. */
export async function headMembers(fh: Reader, subject: string): Promise<{ manifest: Buffer; signature: Buffer | null }> {
  const h = decodeHeader(await readExactAt(fh, 0, BLOCK, subject), 0, subject);
  if (h.name !== 'airlock.json' || h.size > MAX_MANIFEST_BYTES)
    throw new MalformedError('AIRLOCK_PACKAGE_MEMBERS', `${subject} does not start with airlock.json`, { subject });
  const manifest = await readExactAt(fh, BLOCK, h.size, subject);
  const next = BLOCK + padded(h.size);
  const s = decodeHeader(await readExactAt(fh, next, BLOCK, subject), next, subject);
  if (s.name !== 'airlock.json.sig' || s.size !== SIGNATURE_BYTES) return { manifest, signature: null };
  return { manifest, signature: await readExactAt(fh, next + BLOCK, SIGNATURE_BYTES, subject) };
}

/** Write n bytes at pos; all-zero chunks are skipped (a sparse volume on file systems that have holes; ftruncate fills the rest). */
async function writeAt(fh: FileHandle, buf: Buffer, pos: number): Promise<void> {
  if (buf.equals(ZERO.subarray(0, buf.length))) return;
  let done = 0;
  while (done < buf.length) done += (await fh.write(buf, done, buf.length - done, pos + done)).bytesWritten;
}

/**
 * Split the package at `pkgPath` into volumes of at most `split` bytes (headers included) beside
 * it: NAME.airlock.001 … (format.ts). One read of the package: each payload is written after room
 * left for its header and hashed on the way; the headers (with the table of every payload's
 * sha256 and size, signed with `signKey`) are written last. Each volume is fsynced and published
 * without replacing anything (an existing volume name is refused before a byte is written); on
 * any failure every temp file and every volume already published is removed. The package itself
 * is left for the caller.
 */
export async function splitPackage(pkgPath: string, o: { split: number; signKey?: KeyObject; signal?: AbortSignal }): Promise<SplitResult> {
  const name = basename(pkgPath);
  if (Buffer.byteLength(name) > MAX_NAME)
    throw new MalformedError('AIRLOCK_VOLUME_TABLE', `package name ${name} is longer than ${MAX_NAME} bytes`, { subject: name });
  const src = await open(pkgPath, 'r');
  const temps: string[] = [];
  const published: string[] = [];
  try {
    const size = (await src.stat()).size;
    const packageId = await packageIdOf(src, pkgPath);
    const plan = planVolumes(size, o.split, Boolean(o.signKey));
    const finals = plan.sizes.map((_, i) => join(dirname(pkgPath), volumeName(name, i + 1)));
    for (const f of finals)
      if (
        await access(f).then(
          () => true,
          () => false,
        )
      )
        throw outputExists(f, 'remove the old volumes first');

    const volumes: VolumeTable['volumes'] = [];
    let pos = 0;
    const buf = Buffer.allocUnsafe(CHUNK);
    for (let i = 0; i < plan.count; i++) {
      const tmp = tempSibling(finals[i]!);
      temps.push(tmp);
      const out = await open(tmp, 'wx', 0o644);
      try {
        const h = createHash('sha256');
        let done = 0;
        while (done < plan.sizes[i]!) {
          o.signal?.throwIfAborted();
          const n = Math.min(CHUNK, plan.sizes[i]! - done);
          const { bytesRead } = await src.read(buf, 0, n, pos);
          if (bytesRead === 0) throw new MalformedError('AIRLOCK_TRUNCATED', `${pkgPath} shrank while it was being split`, { subject: pkgPath });
          const chunk = buf.subarray(0, bytesRead);
          h.update(chunk);
          await writeAt(out, chunk, plan.header + done);
          done += bytesRead;
          pos += bytesRead;
        }
        await out.truncate(plan.header + plan.sizes[i]!);
        volumes.push({ size: plan.sizes[i]!, sha256: h.digest('hex') });
      } finally {
        await out.close();
      }
    }
    if (pos !== size || (await src.stat()).size !== size)
      throw new MalformedError('AIRLOCK_PACKAGE_CHANGED', `${pkgPath} changed while it was being split`, { subject: pkgPath });

    const table = encodeTable({ format: TABLE_FORMAT, packageId, name, packageSize: size, volumes }, tableRoom(plan.count));
    const signature = o.signKey ? sign(null, table, o.signKey) : Buffer.alloc(0);
    for (let i = 0; i < plan.count; i++) {
      const fixed = encodeFixed({ index: i + 1, count: plan.count, tableLength: table.length, signatureLength: signature.length, packageId });
      const head = Buffer.concat([fixed, table, signature]);
      if (head.length !== plan.header) throw new Error(`volume header is ${head.length} bytes, planned ${plan.header}`);
      const out = await open(temps[i]!, 'r+');
      try {
        let done = 0;
        while (done < head.length) done += (await out.write(head, done, head.length - done, done)).bytesWritten;
        await out.sync();
      } finally {
        await out.close();
      }
    }
    for (let i = 0; i < plan.count; i++) {
      await publishNew(temps[i]!, finals[i]!);
      published.push(finals[i]!);
    }
    await fsyncDir(dirname(pkgPath));
    return { volumes: finals, count: plan.count, volumeBytes: plan.header + plan.payload, packageId };
  } catch (err) {
    for (const p of published) await rm(p, { force: true });
    throw err;
  } finally {
    await src.close();
    for (const t of temps) await rm(t, { force: true }); // gone after a rename; the spare name after a link
  }
}
