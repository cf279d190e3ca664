import { ARCHIVE_CODES, unsafe } from './errors.js';

/** Linux NAME_MAX / PATH_MAX: longer names cannot be written, so refuse them up front by name. */
const MAX_SEGMENT_BYTES = 255;
const MAX_PATH_BYTES = 4096;
// C0 controls and DEL: a newline or escape in a file name breaks logs, terminals and manifests.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0001-\u001f\u007f]/;
/** "C:" or "C:foo": a drive-relative path on Windows escapes any destination folder. */
const DRIVE = /^[A-Za-z]:/;

export interface EntryPath {
  /** "a/b/c.html": segments joined with "/", without "./", empty segments or a trailing "/" ("" for "./"). */
  path: string;
  segments: string[];
  /** The raw name ended with "/" (a directory by name). */
  trailingSlash: boolean;
}

/**
 * Validate an entry name exactly as the archive spells it and normalise it. Pure. Throws
 * UnsafeArchiveError naming `raw`. Each rule is a known zip-slip / tar-slip vector:
 * absolute paths and `..` climb out of the destination; backslashes and drive letters are
 * separators/roots on Windows; NUL truncates the name in C-based tools, so two readers disagree.
 */
export function checkEntryPath(raw: string): EntryPath {
  const refuse = (why: string) => unsafe(ARCHIVE_CODES.UNSAFE_PATH, raw, why);
  if (raw.length === 0) throw refuse('empty name');
  if (raw.includes('\0')) throw refuse('NUL byte in name');
  if (raw.includes('\\')) throw refuse('backslash in name (a path separator on Windows)');
  if (CONTROL.test(raw)) throw refuse('control character in name');
  if (raw.includes('\uFFFD')) throw refuse('name is not valid UTF-8');
  if (raw.startsWith('/')) throw refuse('absolute path');
  if (Buffer.byteLength(raw) > MAX_PATH_BYTES) throw refuse(`name longer than ${MAX_PATH_BYTES} bytes`);
  const segments: string[] = [];
  for (const seg of raw.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') throw refuse('".." segment (path traversal)');
    if (DRIVE.test(seg)) throw refuse('drive letter');
    if (Buffer.byteLength(seg) > MAX_SEGMENT_BYTES) throw refuse(`name segment longer than ${MAX_SEGMENT_BYTES} bytes`);
    segments.push(seg);
  }
  return { path: segments.join('/'), segments, trailingSlash: raw.endsWith('/') };
}
