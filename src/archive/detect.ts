import type { ArchiveFormat } from './types.js';
import { ARCHIVE_CODES, malformed } from './errors.js';

/** How many leading bytes detectFormat needs to decide (one tar header block). */
export const DETECT_BYTES = 512;

/** A tar header's checksum (POSIX ustar; also v7 tar without the "ustar" magic): sum of bytes, chksum field as spaces. */
export function tarChecksumValid(block: Buffer): boolean {
  if (block.length < 512) return false;
  const field = block
    .subarray(148, 156)
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .trim();
  if (!/^[0-7]{1,8}$/.test(field)) return false;
  let sum = 8 * 0x20;
  for (let i = 0; i < 148; i++) sum += block[i]!;
  for (let i = 156; i < 512; i++) sum += block[i]!;
  return sum === parseInt(field, 8) && block[0] !== 0;
}

/**
 * The format from magic bytes, never from the file name (a renamed file must not change how it
 * is parsed). gzip (RFC 1952 ID1 ID2 = 1f 8b) is taken as tar.gz; the tar inside is checked later.
 */
export function detectFormat(head: Buffer, subject = 'archive'): ArchiveFormat {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  if (head.length >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
  // An empty zip is only an end-of-central-directory record (APPNOTE 4.3.16).
  if (head.length >= 22 && head.readUInt32LE(0) === 0x06054b50) return 'zip';
  if (head.length >= 262 && head.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
  if (tarChecksumValid(head)) return 'tar';
  throw malformed(ARCHIVE_CODES.NOT_AN_ARCHIVE, subject, 'not a tar, tar.gz or zip archive (unknown magic bytes)');
}
