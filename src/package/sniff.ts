import { detectFormat, tarChecksumValid, type ArchiveFormat } from '../archive/index.js';
import { ARCHIVE_NAMES } from './manifest.js';
import { BLOCK, headerName } from './tar-header.js';

/** The member names a package may start with (in the right order or not: the reader names what is wrong). */
const PACKAGE_MEMBERS = new Set(['airlock.json', 'airlock.json.sig', ...Object.keys(ARCHIVE_NAMES)]);

export type Sniffed = { kind: 'package' } | { kind: 'archive'; format: ArchiveFormat } | { kind: 'unknown' };

/**
 * What a file is, from its first tar block (or less): a `.airlock` package (a tar whose first
 * member is one of the package's members), an export archive (gzip or zip magic, or a tar of
 * site files: the most common mistake is to pass the one for the other), or neither. Pure.
 */
export function sniff(head: Buffer): Sniffed {
  let format: ArchiveFormat;
  try {
    format = detectFormat(head.subarray(0, BLOCK));
  } catch {
    return { kind: 'unknown' };
  }
  if (format !== 'tar') return { kind: 'archive', format };
  if (head.length < BLOCK || !tarChecksumValid(head)) return { kind: 'unknown' }; // a damaged header: the reader says where
  // By the last segment, so a pax or GNU long-name record for a member ("PaxHeaders/airlock.json")
  // still counts as a (malformed) package, for the reader to refuse by name.
  const name = headerName(head).split('/').pop()!;
  return PACKAGE_MEMBERS.has(name) ? { kind: 'package' } : { kind: 'archive', format };
}
