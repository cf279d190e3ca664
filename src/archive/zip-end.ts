import { ARCHIVE_CODES, malformed } from './errors.js';

/** Where the central directory is, from the end records (APPNOTE 4.3.14-4.3.16). */
export interface ZipEnd {
  entries: number;
  cdOffset: number;
  cdSize: number;
  /** Offset of the first end record (zip64 record if any): the central directory must end there. */
  endOffset: number;
}

const EOCD = 0x06054b50;
const LOC64 = 0x07064b50;
const EOCD64 = 0x06064b50;
/** The most bytes from the end that can hold the end records: EOCD (22) + comment (65535) + zip64 locator (20) + record (56). */
export const ZIP_TAIL_BYTES = 22 + 0xffff + 20 + 56;

export function u64(buf: Buffer, pos: number, subject: string): number {
  const v = buf.readBigUInt64LE(pos);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw malformed(ARCHIVE_CODES.UNSUPPORTED, subject, 'zip64 value too large');
  return Number(v);
}

/**
 * Parse the end records from the last bytes of the archive. Pure. `tailStart` is the tail's
 * offset in the archive. Strict on purpose: the comment must run exactly to the end of the file
 * and the central directory must sit right before the end record (no prepended or hidden data,
 * a classic way to make two zip readers see two different archives).
 */
export function parseZipEnd(tail: Buffer, tailStart: number, subject: string): ZipEnd {
  let pos = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD && i + 22 + tail.readUInt16LE(i + 20) === tail.length) {
      pos = i;
      break;
    }
  }
  if (pos < 0) throw malformed(ARCHIVE_CODES.TRUNCATED, subject, 'zip has no end-of-central-directory record (truncated?)');
  const disk = tail.readUInt16LE(pos + 4);
  const cdDisk = tail.readUInt16LE(pos + 6);
  const onDisk = tail.readUInt16LE(pos + 8);
  let entries = tail.readUInt16LE(pos + 10);
  let cdSize = tail.readUInt32LE(pos + 12);
  let cdOffset = tail.readUInt32LE(pos + 16);
  let endOffset = tailStart + pos;
  const zip64 = entries === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff;
  if (zip64) {
    const loc = pos - 20;
    if (loc < 0 || tail.readUInt32LE(loc) !== LOC64) throw malformed(ARCHIVE_CODES.CORRUPT, subject, 'zip64 end locator missing');
    const recAt = u64(tail, loc + 8, subject) - tailStart;
    if (recAt < 0 || recAt + 56 > loc || tail.readUInt32LE(recAt) !== EOCD64) {
      throw malformed(ARCHIVE_CODES.UNSUPPORTED, subject, 'zip64 end record not found before its locator');
    }
    if (tail.readUInt32LE(recAt + 16) !== 0 || tail.readUInt32LE(recAt + 20) !== 0) throw multiDisk(subject);
    entries = u64(tail, recAt + 32, subject);
    if (u64(tail, recAt + 24, subject) !== entries) throw multiDisk(subject);
    cdSize = u64(tail, recAt + 40, subject);
    cdOffset = u64(tail, recAt + 48, subject);
    endOffset = tailStart + recAt;
  } else if (disk !== 0 || cdDisk !== 0 || onDisk !== entries) {
    throw multiDisk(subject);
  }
  if (cdOffset + cdSize !== endOffset) {
    throw malformed(
      ARCHIVE_CODES.CORRUPT,
      subject,
      `central directory (${cdOffset}+${cdSize}) does not end at the end record (${endOffset}): prepended or hidden data`,
    );
  }
  return { entries, cdOffset, cdSize, endOffset };
}

function multiDisk(subject: string) {
  return malformed(ARCHIVE_CODES.UNSUPPORTED, subject, 'multi-disk (split) zip archives are not supported');
}
