import { createHash, verify, type KeyObject } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { DigestMismatchError, MalformedError, SignatureError, UsageError, type ErrorCode } from '../../errors.js';
import { SpanFile, type FileSpan } from '../../archive/index.js';
import { fingerprint } from '../keys.js';
import {
  FIXED,
  MAX_TABLE_BYTES,
  SIGNATURE_BYTES,
  decodeFixed,
  decodeTable,
  isVolumeHead,
  parseVolumeName,
  volumeName,
  type FixedHeader,
  type VolumeTable,
} from './format.js';
import { headMembers, readExactAt } from './write.js';
import { openInputFile } from '../reader.js';
import { kindOf } from '../../util/fsx.js';
import { describeFsError } from '../../util/fs-words.js';

/** Folders searched for the other volumes (--volumes): a few mounts, not a crawl. */
export const MAX_VOLUME_DIRS = 32;

interface Head {
  path: string;
  key: string;
  size: number;
  fixed: FixedHeader;
  tail: Buffer; /* table + signature */
}

export interface VolumeSet {
  /** The package, read in place from the volumes' payloads (readPackage, verifyPackage, importPackage take it). */
  input: { path: string; spans: FileSpan[] };
  table: VolumeTable;
  /** Every volume's path, in order. */
  paths: string[];
  signed: boolean;
  signer: string | null;
}

export interface OpenVolumesOptions {
  /** More folders to look in for the other volumes (several media, mounts). */
  dirs?: string[];
  trust: KeyObject[];
  allowUnsigned?: boolean;
  signal?: AbortSignal;
  /** After each volume's payload is hashed and found right. */
  onVolume?: (index: number, count: number, path: string) => void;
}

const vol = (code: ErrorCode, message: string, subject: string, extra: Record<string, unknown> = {}) =>
  new MalformedError(code, message, { subject, ...extra });

/**
 * Does the file start with the volume magic? False for anything that is not a readable regular
 * file (the caller's normal path reports it); a FIFO or a device is never waited on or read.
 */
export async function isVolume(path: string): Promise<boolean> {
  try {
    const fh = await openInputFile(path, 'volume');
    try {
      const b = Buffer.alloc(FIXED);
      const { bytesRead } = await fh.read(b, 0, FIXED, 0);
      return isVolumeHead(b.subarray(0, bytesRead));
    } finally {
      await fh.close();
    }
  } catch {
    return false;
  }
}

/** A volume's header: the fixed part, then exactly the bounded table + signature it declares. Reads nothing else. */
async function readHead(path: string): Promise<Head> {
  const fh = await openInputFile(path, 'volume');
  try {
    const st = await fh.stat();
    const head = await readExactAt(fh, 0, Math.min(FIXED, st.size), path);
    const fixed = decodeFixed(head, path);
    const tailLength = fixed.tableLength + fixed.signatureLength;
    if (tailLength > MAX_TABLE_BYTES + SIGNATURE_BYTES)
      throw vol('AIRLOCK_VOLUME_HEADER', `volume ${path}: header of ${tailLength} bytes is over the limit`, path);
    if (st.size < FIXED + tailLength)
      throw vol('AIRLOCK_VOLUME_TRUNCATED', `volume ${path} is truncated: it ends inside its header (${st.size} bytes); copy it again from the original`, path);
    const tail = await readExactAt(fh, FIXED, tailLength, path);
    return { path, key: `${st.dev}:${st.ino}`, size: st.size, fixed, tail };
  } finally {
    await fh.close();
  }
}

function checkTableSignature(head: Head, o: OpenVolumesOptions): { signed: boolean; signer: string | null; key: KeyObject | null } {
  const table = head.tail.subarray(0, head.fixed.tableLength);
  const sig = head.tail.subarray(head.fixed.tableLength);
  if (sig.length === 0) {
    if (o.allowUnsigned) return { signed: false, signer: null, key: null };
    throw new SignatureError('AIRLOCK_UNSIGNED', `the volume table of ${head.path} is not signed; pass --allow-unsigned to accept unsigned volumes`, {
      subject: head.path,
    });
  }
  for (const key of o.trust) {
    if (key.asymmetricKeyType === 'ed25519' && verify(null, table, key, sig)) return { signed: true, signer: fingerprint(key), key };
  }
  throw new SignatureError(
    'AIRLOCK_UNTRUSTED_SIGNATURE',
    `the volume table of ${head.path} does not verify with any trusted key${o.trust.length ? '' : ' (none given: pass --trust PUBFILE)'}: signed by an untrusted key, or the table was altered`,
    { subject: head.path },
  );
}

export interface VolumeInfo {
  path: string;
  index: number;
  count: number;
  signed: boolean;
  table: VolumeTable;
  /** Where the payload starts in every volume of the set. */ headerBytes: number;
}

/** One volume's header and table, for `inspect` (bounded; the signature is NOT checked). */
export async function describeVolume(path: string): Promise<VolumeInfo> {
  const h = await readHead(resolve(path));
  const table = decodeTable(h.tail.subarray(0, h.fixed.tableLength), h.fixed, h.path);
  return { path: h.path, index: h.fixed.index, count: h.fixed.count, signed: h.fixed.signatureLength > 0, table, headerBytes: FIXED + h.tail.length };
}

/**
 * Find, check and open a package's volumes in place, read-only, before any of its content is
 * used: every volume present once, in its place, of this package, of the size its signed table
 * says and with the sha256 it says — a bad one is named on its own (re-copy just that volume).
 * `given`: one or more volume paths (any of the set); the others are looked for by name
 * (NAME.airlock.NNN) in the folders of the given ones and in `o.dirs`. Never writes, never joins.
 */
export async function openVolumes(given: string[], o: OpenVolumesOptions): Promise<VolumeSet> {
  if (given.length === 0) throw new UsageError('no volume given', { subject: 'PKG' });
  if ((o.dirs?.length ?? 0) > MAX_VOLUME_DIRS) throw new UsageError(`at most ${MAX_VOLUME_DIRS} folders with --volumes`, { subject: '--volumes' });
  const heads = [];
  for (const p of given) heads.push(await readHead(resolve(p)));
  const ref = heads[0]!;
  for (const h of heads.slice(1)) {
    if (h.fixed.packageId !== ref.fixed.packageId || !h.tail.equals(ref.tail)) {
      throw vol(
        'AIRLOCK_VOLUME_MIXED',
        `the volumes given belong to two packages: ${ref.path} (package ${ref.fixed.packageId.slice(0, 12)}) and ${h.path} (package ${h.fixed.packageId.slice(0, 12)})`,
        h.path,
        { other: ref.path },
      );
    }
  }
  const trust = checkTableSignature(ref, o);
  const table = decodeTable(ref.tail.subarray(0, ref.fixed.tableLength), ref.fixed, ref.path);
  const count = table.volumes.length;

  // Place every volume: the given ones by their header, the rest by name in the folders.
  const slots: Head[][] = Array.from({ length: count }, () => []);
  const seen = new Set<string>();
  const place = (h: Head, wantIndex: number | null) => {
    if (seen.has(h.key)) return;
    seen.add(h.key);
    if (h.fixed.packageId !== ref.fixed.packageId || !h.tail.equals(ref.tail)) {
      throw vol(
        'AIRLOCK_VOLUME_FOREIGN',
        `volume ${h.path} belongs to another package (${h.fixed.packageId.slice(0, 12)}, not ${ref.fixed.packageId.slice(0, 12)}): remove it or give the right one`,
        h.path,
      );
    }
    const named = parseVolumeName(basename(h.path))?.index ?? null;
    const expected = wantIndex ?? named;
    if (expected !== null && expected !== h.fixed.index) {
      throw vol(
        'AIRLOCK_VOLUME_ORDER',
        `volume ${h.path} is named as volume ${expected} but holds volume ${h.fixed.index} of ${count} (renamed or reordered): give each volume its own name`,
        h.path,
      );
    }
    slots[h.fixed.index - 1]!.push(h);
  };
  for (const h of heads) place(h, null);
  const dirs = [...new Set([...heads.map((h) => dirname(h.path)), ...(o.dirs ?? []).map((d) => resolve(d))])];
  const bases = [...new Set([...heads.map((h) => parseVolumeName(basename(h.path))?.base).filter((b): b is string => Boolean(b)), table.name])];
  for (let i = 1; i <= count; i++) {
    for (const d of dirs) {
      for (const b of bases) {
        const p = join(d, volumeName(b, i));
        const st = await stat(p).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
          // A loop of symbolic links or an unreadable name is there but cannot be a volume: said so, not "missing".
          throw vol('AIRLOCK_VOLUME_NOT_A_FILE', `volume ${i} of ${count} (${p}) ${describeFsError(err)}: copy that volume again from the original`, p, {
            index: i,
            count,
          });
        });
        if (!st || seen.has(`${st.dev}:${st.ino}`)) continue;
        // Something else under a volume's name (a FIFO, a device, a folder) is never opened: that volume of the set is bad.
        if (!st.isFile())
          throw vol(
            'AIRLOCK_VOLUME_NOT_A_FILE',
            `volume ${i} of ${count} (${p}) is ${kindOf(st)}, not a regular file: copy that volume again from the original`,
            p,
            { index: i, count },
          );
        place(await readHead(p), i);
      }
    }
  }

  // Presence, uniqueness and size of every volume before a single payload byte is hashed.
  const chosen: Head[] = [];
  for (let i = 1; i <= count; i++) {
    const found = slots[i - 1]!;
    const want = volumeName(table.name, i);
    if (found.length === 0)
      throw vol(
        'AIRLOCK_VOLUME_MISSING',
        `volume ${i} of ${count} (${want}) is missing: not given and not found in ${dirs.join(', ')}; add its folder with --volumes DIR`,
        want,
        { index: i, count },
      );
    if (found.length > 1)
      throw vol('AIRLOCK_VOLUME_DUPLICATE', `volume ${i} of ${count} is there twice: ${found.map((h) => h.path).join(' and ')}; keep one`, found[1]!.path, {
        index: i,
      });
    const h = found[0]!;
    const need = FIXED + h.tail.length + table.volumes[i - 1]!.size;
    if (h.size < need)
      throw vol('AIRLOCK_VOLUME_TRUNCATED', `volume ${h.path} is truncated: ${h.size} bytes of ${need}; copy it again from the original`, h.path, { index: i });
    if (h.size > need)
      throw vol(
        'AIRLOCK_VOLUME_SIZE',
        `volume ${h.path} is ${h.size} bytes, ${h.size - need} more than its table says; copy it again from the original`,
        h.path,
        { index: i },
      );
    chosen.push(h);
  }
  const spans = chosen.map((h, i) => ({ path: h.path, start: FIXED + h.tail.length, length: table.volumes[i]!.size }));

  // Every payload against the signed table; all bad ones named together.
  const bad: string[] = [];
  for (let i = 0; i < count; i++) {
    o.signal?.throwIfAborted();
    if ((await hashSpan(spans[i]!, o.signal)) !== table.volumes[i]!.sha256) bad.push(spans[i]!.path);
    else o.onVolume?.(i + 1, count, spans[i]!.path);
  }
  if (bad.length > 0) {
    throw new DigestMismatchError(
      'AIRLOCK_VOLUME_DIGEST',
      `${bad.length === 1 ? 'volume' : 'volumes'} ${bad.join(', ')} ${bad.length === 1 ? 'does' : 'do'} not match the sha256 in the signed volume table: damaged in transit; copy ${bad.length === 1 ? 'it' : 'them'} again from the original (the other volumes are fine)`,
      { subject: bad[0]!, volumes: bad },
    );
  }

  // The table is bound to the package inside: its id is the manifest's sha256, signed by the same key.
  const input = { path: chosen[0]!.path, spans };
  const file = await SpanFile.open(spans);
  let headM;
  try {
    headM = await headMembers(file, input.path);
  } finally {
    await file.close();
  }
  if (createHash('sha256').update(headM.manifest).digest('hex') !== table.packageId) {
    throw new DigestMismatchError(
      'AIRLOCK_VOLUME_FOREIGN',
      `the package inside the volumes is not the one their table names (${table.packageId.slice(0, 12)})`,
      { subject: input.path },
    );
  }
  if (trust.key && !(headM.signature && verify(null, headM.manifest, trust.key, headM.signature))) {
    throw new SignatureError('AIRLOCK_VOLUME_SIGNER', `the volume table is signed by ${trust.signer} but the package inside is not signed by that key`, {
      subject: input.path,
    });
  }
  return { input, table, paths: chosen.map((h) => h.path), signed: trust.signed, signer: trust.signer };
}

async function hashSpan(s: FileSpan, signal?: AbortSignal): Promise<string> {
  const fh = await openInputFile(s.path, 'volume');
  try {
    const h = createHash('sha256');
    const buf = Buffer.allocUnsafe(1024 * 1024);
    let done = 0;
    while (done < s.length) {
      signal?.throwIfAborted();
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, s.length - done), s.start + done);
      if (bytesRead === 0) throw vol('AIRLOCK_VOLUME_TRUNCATED', `volume ${s.path} is truncated`, s.path);
      h.update(buf.subarray(0, bytesRead));
      done += bytesRead;
    }
    return h.digest('hex');
  } finally {
    await fh.close();
  }
}
