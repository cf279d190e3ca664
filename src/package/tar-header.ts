import { Header } from 'tar';
import { MalformedError } from '../errors.js';
import { tarChecksumValid } from '../archive/index.js';

/**
 * The tar headers of a `.airlock` package (pure: Buffer in, Buffer out). We write one plain ustar
 * header per member, deterministic (mode 0644, uid/gid 0, no user names, mtime from the manifest),
 * so the same manifest and archive always give the same package bytes.
 */
export const BLOCK = 512;
/** Round a member size up to whole tar blocks. */
export const padded = (size: number): number => Math.ceil(size / BLOCK) * BLOCK;

export function encodeHeader(name: string, size: number, mtime: Date): Buffer {
  const h = new Header({ path: name, mode: 0o644, uid: 0, gid: 0, size, mtime, type: 'File' });
  const block = Buffer.alloc(BLOCK);
  const needPax = h.encode(block, 0);
  // Our names are short ASCII, so the only field that can overflow is the size of an archive over
  // 8 GiB: node-tar then writes it base-256 (the GNU/star extension that GNU tar, bsdtar and
  // node-tar read), which keeps the package a plain three-member tar with no pax records.
  if (needPax && size <= 0o77777777777) throw new Error(`tar header for ${name} would need a pax record`);
  return block;
}

export interface MemberHeader {
  name: string;
  size: number;
}

/** The numeric fields of a ustar header: [name, offset, length]. */
const NUMERIC: ReadonlyArray<readonly [string, number, number]> = [
  ['mode', 100, 8],
  ['uid', 108, 8],
  ['gid', 116, 8],
  ['size', 124, 12],
  ['mtime', 136, 12],
  ['devmajor', 329, 8],
  ['devminor', 337, 8],
];
/** A member of up to this size still pads to whole blocks with a safe integer. */
const MAX_SIZE = Number.MAX_SAFE_INTEGER - BLOCK;

/**
 * One numeric field, as octal digits (POSIX; space/NUL padded, empty = 0) or as the base-256
 * extension (first byte 0x80: a big-endian positive number; GNU tar writes big sizes and ids so).
 * Returns null for anything else: negative base-256 (0xff), stray characters, or a value past
 * 2^53 - 1 that no JavaScript number holds exactly (node-tar threw a code-less error there).
 */
export function parseNumeric(field: Buffer): number | null {
  if (field[0] === 0x80) {
    let n = 0n;
    for (let i = 1; i < field.length; i++) n = (n << 8n) | BigInt(field[i]!);
    return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : null;
  }
  if (field[0]! & 0x80) return null;
  const digits = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .replace(/^ +/, '');
  if (digits === '') return 0;
  return /^[0-7]+$/.test(digits) ? parseInt(digits, 8) : null; // at most 12 octal digits: < 2^36
}

/** A NUL-terminated text field (UTF-8, as node-tar and GNU tar write names). */
const text = (block: Buffer, at: number, length: number): string => {
  const field = block.subarray(at, at + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? length : end).toString('utf8');
};

/** The member name of a tar header block. POSIX ustar splits long names into prefix/name; the GNU form ("ustar ") keeps times there instead. */
export function headerName(block: Buffer): string {
  const prefix = block.subarray(257, 263).toString('latin1') === 'ustar\0' ? text(block, 345, 155) : '';
  return (prefix ? `${prefix}/` : '') + text(block, 0, 100);
}

/**
 * Decode one header block of an untrusted package. Anything but a regular file with a valid
 * checksum and a ustar magic is refused, so pax/GNU long-name records, links and devices cannot
 * smuggle a different name or extra data past the member list check. Every numeric field must be
 * a number in range (octal, or base-256 below 2^53), else the member is refused by name (exit 4).
 */
export function decodeHeader(block: Buffer, position: number, subject: string): MemberHeader {
  if (block.length < BLOCK) throw new MalformedError('AIRLOCK_TRUNCATED', `package is truncated: no tar header at byte ${position} (${subject})`, { subject });
  if (block.every((b) => b === 0)) {
    throw new MalformedError('AIRLOCK_PACKAGE_MEMBERS', `package ends at byte ${position} but ${subject} was expected there`, { subject });
  }
  const magic = block.subarray(257, 263).toString('latin1');
  if (!tarChecksumValid(block) || (magic !== 'ustar\0' && magic !== 'ustar ')) {
    throw new MalformedError('AIRLOCK_PACKAGE_NOT_TAR', `package is not a ustar archive: bad tar header at byte ${position} (${subject})`, { subject });
  }
  const name = headerName(block);
  const type = String.fromCharCode(block[156]!);
  if (type !== '0' && type !== '\0') {
    throw new MalformedError(
      'AIRLOCK_PACKAGE_MEMBERS',
      `package member ${JSON.stringify(name)} at byte ${position} is not a regular file (tar type ${JSON.stringify(type)})`,
      { subject: name },
    );
  }
  const values: Record<string, number> = {};
  for (const [field, at, length] of NUMERIC) {
    const v = parseNumeric(block.subarray(at, at + length));
    if (v === null || (field === 'size' && v > MAX_SIZE)) {
      throw new MalformedError(
        'AIRLOCK_PACKAGE_HEADER',
        `package member ${JSON.stringify(name)} at byte ${position}: the tar header's ${field} field is not a number in range (octal, or base-256 below 2^53)`,
        { subject: name, field },
      );
    }
    values[field] = v;
  }
  return { name, size: values.size! };
}

/** The end of a tar archive: two zero blocks (POSIX), plus any zero padding to a record boundary (GNU tar pads to 10 KiB). */
export const MIN_TAIL = 2 * BLOCK;
export const MAX_TAIL = 2 * BLOCK + 20 * BLOCK;

export function checkTail(tail: Buffer, position: number): void {
  const nonZero = tail.findIndex((b) => b !== 0);
  if (nonZero >= 0) {
    throw new MalformedError(
      'AIRLOCK_PACKAGE_MEMBERS',
      `package has data after its last member (byte ${position + nonZero}); a package holds exactly airlock.json, airlock.json.sig and the bundle`,
      { subject: `byte ${position + nonZero}` },
    );
  }
}
