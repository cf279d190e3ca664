import { Header } from 'tar';
import { MalformedError } from '../errors.js';

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

/**
 * Decode one header block of an untrusted package. Anything but a regular file with a valid
 * checksum and a ustar magic is refused, so pax/GNU long-name records, links and devices cannot
 * smuggle a different name or extra data past the member list check.
 */
export function decodeHeader(block: Buffer, position: number, subject: string): MemberHeader {
  if (block.length < BLOCK) throw new MalformedError('AIRLOCK_TRUNCATED', `package is truncated: no tar header at byte ${position} (${subject})`, { subject });
  if (block.every((b) => b === 0)) {
    throw new MalformedError('AIRLOCK_PACKAGE_MEMBERS', `package ends at byte ${position} but ${subject} was expected there`, { subject });
  }
  const magic = block.subarray(257, 263).toString('latin1');
  const h = new Header(block, 0);
  if (!h.cksumValid || (magic !== 'ustar\0' && magic !== 'ustar ')) {
    throw new MalformedError('AIRLOCK_PACKAGE_NOT_TAR', `package is not a ustar archive: bad tar header at byte ${position} (${subject})`, { subject });
  }
  const name = h.path ?? '';
  if (h.type !== 'File' && h.type !== 'OldFile') {
    throw new MalformedError('AIRLOCK_PACKAGE_MEMBERS', `package member ${JSON.stringify(name)} at byte ${position} is a ${h.type} entry, not a regular file`, { subject: name });
  }
  const size = h.size ?? -1;
  if (!Number.isSafeInteger(size) || size < 0) throw new MalformedError('AIRLOCK_PACKAGE_NOT_TAR', `package member ${JSON.stringify(name)} has an invalid size`, { subject: name });
  return { name, size };
}

/** The end of a tar archive: two zero blocks (POSIX), plus any zero padding to a record boundary (GNU tar pads to 10 KiB). */
export const MIN_TAIL = 2 * BLOCK;
export const MAX_TAIL = 2 * BLOCK + 20 * BLOCK;

export function checkTail(tail: Buffer, position: number): void {
  const nonZero = tail.findIndex((b) => b !== 0);
  if (nonZero >= 0) {
    throw new MalformedError('AIRLOCK_PACKAGE_MEMBERS', `package has data after its last member (byte ${position + nonZero}); a package holds exactly airlock.json, airlock.json.sig and the bundle`, { subject: `byte ${position + nonZero}` });
  }
}
