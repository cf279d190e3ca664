import type { CdEntry } from './zip-cd.js';
import { ARCHIVE_CODES, malformed } from './errors.js';
import { applyZip64 } from './zip-cd.js';
import { extraFields } from './zip-name.js';

const LFH = 0x04034b50;
export const LOCAL_FIXED = 30;
/** Flags that change how the bytes are read: encryption (0), data descriptor (3), strong encryption (6), masked headers (13). */
const READ_FLAGS = 0x0001 | 0x0008 | 0x0040 | 0x2000;

/** Name and extra lengths from the fixed part of a local header. Pure. */
export function localLengths(fixed: Buffer, e: CdEntry): { nameLen: number; extraLen: number } {
  if (fixed.readUInt32LE(0) !== LFH) throw mismatch(e, 'no local file header at the offset the central directory gives');
  return { nameLen: fixed.readUInt16LE(26), extraLen: fixed.readUInt16LE(28) };
}

/**
 * Cross-check a local header against the central directory (pure). Readers that stream a zip
 * trust local headers, readers that seek trust the directory: any disagreement lets one archive
 * show two different contents, so it is refused.
 */
export function checkLocalHeader(header: Buffer, e: CdEntry): void {
  const { nameLen, extraLen } = localLengths(header, e);
  if (!header.subarray(LOCAL_FIXED, LOCAL_FIXED + nameLen).equals(e.nameBytes)) throw mismatch(e, 'local header names another file');
  const flags = header.readUInt16LE(6);
  if ((flags & READ_FLAGS) !== (e.flags & READ_FLAGS)) throw mismatch(e, 'local header flags differ');
  if (header.readUInt16LE(8) !== e.method) throw mismatch(e, 'local header compression method differs');
  const local = { crc: header.readUInt32LE(14), compressedSize: header.readUInt32LE(18), size: header.readUInt32LE(22) };
  applyZip64(local, extraFields(header.subarray(LOCAL_FIXED + nameLen, LOCAL_FIXED + nameLen + extraLen)).get(0x0001), 0, e.name);
  // With a data descriptor (bit 3) the local fields may be zero; any value given must still agree.
  const deferred = (flags & 0x0008) !== 0;
  for (const k of ['crc', 'compressedSize', 'size'] as const) {
    if (local[k] !== e[k] && !(deferred && local[k] === 0)) throw mismatch(e, `local header ${k} ${local[k]} differs from central directory ${e[k]}`);
  }
}

/** Encryption and methods other than stored (0) and deflate (8) are refused by name. */
export function checkSupported(e: CdEntry): void {
  if (e.flags & (0x0001 | 0x0040)) throw malformed(ARCHIVE_CODES.UNSUPPORTED, e.name, 'encrypted zip entries are not supported');
  if (e.flags & 0x2000) throw malformed(ARCHIVE_CODES.UNSUPPORTED, e.name, 'masked zip headers are not supported');
  if (e.method !== 0 && e.method !== 8)
    throw malformed(ARCHIVE_CODES.UNSUPPORTED, e.name, `compression method ${e.method} is not supported (only stored and deflate)`);
  if (e.method === 0 && e.compressedSize !== e.size)
    throw malformed(ARCHIVE_CODES.CORRUPT, e.name, 'stored entry whose compressed and uncompressed sizes differ');
}

function mismatch(e: CdEntry, why: string) {
  return malformed(ARCHIVE_CODES.CORRUPT, e.name, `zip local header does not match the central directory: ${why}`);
}
