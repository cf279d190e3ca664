import { MalformedError, UnsafeArchiveError, type ErrorDetails } from '../errors.js';

/** Stable codes of every archive refusal (exit 4). Other modules and tests match on these. */
export const ARCHIVE_CODES = {
  UNSAFE_PATH: 'AIRLOCK_UNSAFE_PATH',
  LINK: 'AIRLOCK_LINK',
  SPECIAL_FILE: 'AIRLOCK_SPECIAL_FILE',
  DUPLICATE_PATH: 'AIRLOCK_DUPLICATE_PATH',
  CASE_COLLISION: 'AIRLOCK_CASE_COLLISION',
  TOO_MANY_FILES: 'AIRLOCK_TOO_MANY_FILES',
  TOO_LARGE: 'AIRLOCK_TOO_LARGE',
  BOMB: 'AIRLOCK_BOMB',
  TRUNCATED: 'AIRLOCK_TRUNCATED',
  NOT_AN_ARCHIVE: 'AIRLOCK_NOT_AN_ARCHIVE',
  CORRUPT: 'AIRLOCK_CORRUPT',
  UNSUPPORTED: 'AIRLOCK_UNSUPPORTED',
  NO_INDEX: 'AIRLOCK_NO_INDEX',
} as const;
export type ArchiveCode = (typeof ARCHIVE_CODES)[keyof typeof ARCHIVE_CODES];

/** Quote an entry name for a message: JSON escapes NUL, control characters and quotes. */
export function quote(name: string): string {
  return JSON.stringify(name);
}

/** An entry that breaks a safety rule. `subject` is the entry name exactly as the archive gave it. */
export function unsafe(code: ArchiveCode, subject: string, why: string, extra: ErrorDetails = {}): UnsafeArchiveError {
  return new UnsafeArchiveError(code, `unsafe archive entry ${quote(subject)}: ${why}`, { ...extra, subject });
}

/** An archive that cannot be read as what it claims to be. `subject` names the entry, or the file. */
export function malformed(code: ArchiveCode, subject: string, why: string, extra: ErrorDetails = {}, cause?: unknown): MalformedError {
  return new MalformedError(code, `malformed archive ${quote(subject)}: ${why}`, { ...extra, subject }, cause === undefined ? undefined : { cause });
}
