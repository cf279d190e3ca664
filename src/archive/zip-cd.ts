import type { EntryKind } from './guard.js';
import { ARCHIVE_CODES, malformed } from './errors.js';
import { u64 } from './zip-end.js';
import { checkUnicodePathField, decodeZipName, extraFields } from './zip-name.js';

/** One central directory record (APPNOTE 4.3.12), zip64 sizes applied. */
export interface CdEntry {
  name: string;
  nameBytes: Buffer;
  kind: EntryKind;
  typeName: string;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

const CDH = 0x02014b50;
const S_IFMT = 0o170000;
const UNIX_TYPES: Record<number, [EntryKind, string]> = {
  0o100000: ['file', 'file'],
  0o040000: ['dir', 'directory'],
  0o120000: ['symlink', 'symlink'],
  0o020000: ['device', 'character device'],
  0o060000: ['device', 'block device'],
  0o010000: ['fifo', 'fifo'],
  0o140000: ['other', 'socket'],
};

/** Parse `count` records filling exactly `buf` (or only its start when `partial`). Pure. Names and kinds, no policy. */
export function parseCentralDirectory(buf: Buffer, count: number, subject: string, partial = false): CdEntry[] {
  const out: CdEntry[] = [];
  let p = 0;
  for (let n = 0; n < count; n++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== CDH) {
      throw malformed(ARCHIVE_CODES.CORRUPT, subject, `central directory record ${n} is missing or damaged`);
    }
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const end = p + 46 + nameLen + extraLen + commentLen;
    if (end > buf.length) throw malformed(ARCHIVE_CODES.CORRUPT, subject, `central directory record ${n} runs past the directory`);
    const nameBytes = buf.subarray(p + 46, p + 46 + nameLen);
    const name = decodeZipName(nameBytes);
    const extras = extraFields(buf.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen));
    const unicodePath = extras.get(0x7075);
    if (unicodePath) checkUnicodePathField(unicodePath, name);
    const e: CdEntry = {
      name,
      nameBytes,
      ...kindOf(buf.readUInt16LE(p + 4) >> 8, buf.readUInt32LE(p + 38), name),
      flags: buf.readUInt16LE(p + 8),
      method: buf.readUInt16LE(p + 10),
      crc: buf.readUInt32LE(p + 16),
      compressedSize: buf.readUInt32LE(p + 20),
      size: buf.readUInt32LE(p + 24),
      localOffset: buf.readUInt32LE(p + 42),
    };
    applyZip64(e, extras.get(0x0001), buf.readUInt16LE(p + 34), subject);
    out.push(e);
    p = end;
  }
  if (!partial && p !== buf.length) throw malformed(ARCHIVE_CODES.CORRUPT, subject, 'central directory has bytes after its last record');
  return out;
}

/**
 * The Unix file type in the high 16 bits when "version made by" is Unix (3). Permission bits
 * without type bits (Python's `zipfile.writestr` writes 0o600 << 16) say nothing about the type:
 * then, as without a Unix mode, a trailing "/" or the MS-DOS directory bit makes a folder and
 * anything else is a regular file.
 */
function kindOf(host: number, external: number, name: string): { kind: EntryKind; typeName: string } {
  const type = (external >>> 16) & S_IFMT;
  if (host === 3 && type !== 0) {
    const t = UNIX_TYPES[type];
    if (t) return { kind: t[0], typeName: t[1] };
    return { kind: 'other', typeName: `unknown file type 0o${type.toString(8)}` };
  }
  if (name.endsWith('/') || (external & 0x10) !== 0) return { kind: 'dir', typeName: 'directory' };
  return { kind: 'file', typeName: 'file' };
}

/** zip64 extended information (APPNOTE 4.5.3): only the fields whose 32-bit value is saturated, in order. */
export function applyZip64(e: { size: number; compressedSize: number; localOffset?: number }, field: Buffer | undefined, disk: number, subject: string): void {
  const need = [e.size === 0xffffffff, e.compressedSize === 0xffffffff, e.localOffset === 0xffffffff];
  if (disk !== 0) throw malformed(ARCHIVE_CODES.UNSUPPORTED, subject, 'multi-disk (split) zip archives are not supported');
  if (!need.some(Boolean)) return;
  if (!field) throw malformed(ARCHIVE_CODES.CORRUPT, subject, 'zip64 sizes without a zip64 extra field');
  let q = 0;
  const next = () => {
    if (q + 8 > field.length) throw malformed(ARCHIVE_CODES.CORRUPT, subject, 'zip64 extra field too short');
    const v = u64(field, q, subject);
    q += 8;
    return v;
  };
  if (need[0]) e.size = next();
  if (need[1]) e.compressedSize = next();
  if (need[2]) e.localOffset = next();
}
