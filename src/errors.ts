/**
 * One error tree for the whole tool (after undici's errors): every failure a user can see is an
 * AirlockError with a stable `code` and the contract's exit code. The CLI maps errors to exit
 * codes by `exitCode` only; nothing else decides how a process ends.
 */

/** The exit codes every command documents in its --help. */
export const EXIT = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  UPSTREAM_JOB_FAILED: 3,
  VERIFICATION: 4,
  AUTH: 5,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * Every code an error can carry, the stable part scripts match on (`[AIRLOCK_…]` and `--json`'s
 * `code`). A union, so that a misspelt code is a type error rather than a new, undocumented code.
 */
export const ERROR_CODES = [
  'AIRLOCK_ABORTED',
  'AIRLOCK_ADMIN_KEY_FILE',
  'AIRLOCK_MIRROR_TOKEN_FILE',
  'AIRLOCK_ACCESS_LOG',
  'AIRLOCK_ALREADY_A_PACKAGE',
  'AIRLOCK_ARCHIVE_CHANGED',
  'AIRLOCK_ARCHIVE_DIGEST',
  'AIRLOCK_ARCHIVE_FORMAT',
  'AIRLOCK_ARCHIVE_SIZE',
  'AIRLOCK_AUDIENCE',
  'AIRLOCK_AUDIT_BROKEN',
  'AIRLOCK_AUDIT_TORN',
  'AIRLOCK_AUTH',
  'AIRLOCK_AUTH_MISSING',
  'AIRLOCK_BAD_BASE_PATH',
  'AIRLOCK_BAD_DELTA',
  'AIRLOCK_BAD_HASH',
  'AIRLOCK_BAD_HTTP',
  'AIRLOCK_BAD_LABEL',
  'AIRLOCK_BAD_MANIFEST',
  'AIRLOCK_BAD_META_NAME',
  'AIRLOCK_BAD_ORIGIN',
  'AIRLOCK_BAD_POLICY',
  'AIRLOCK_BAD_SEEN',
  'AIRLOCK_BAD_SELECTOR',
  'AIRLOCK_BAD_SIGNATURE',
  'AIRLOCK_BAD_STATE',
  'AIRLOCK_BAD_VALUES',
  'AIRLOCK_BAD_VERSION',
  'AIRLOCK_BOMB',
  'AIRLOCK_CASE_COLLISION',
  'AIRLOCK_CONFLICT',
  'AIRLOCK_CORRUPT',
  'AIRLOCK_DAMAGED_CACHE_FILE',
  'AIRLOCK_DELTA_BASE',
  'AIRLOCK_DELTA_PATCH',
  'AIRLOCK_DELTA_PAYLOAD',
  'AIRLOCK_DELTA_TARGET',
  'AIRLOCK_DEST_NOT_EMPTY',
  'AIRLOCK_DIGEST_MISMATCH',
  'AIRLOCK_DOMAIN_MISMATCH',
  'AIRLOCK_DOWNGRADE',
  'AIRLOCK_DOWNLOAD_FAILED',
  'AIRLOCK_DOWNLOAD_REFUSED',
  'AIRLOCK_DOWNLOAD_TIMEOUT',
  'AIRLOCK_DOWNLOAD_TOO_SLOW',
  'AIRLOCK_DOWNLOAD_UNSTABLE',
  'AIRLOCK_DUPLICATE_PATH',
  'AIRLOCK_EXISTS',
  'AIRLOCK_EXPIRED',
  'AIRLOCK_EXTRA_FILE',
  'AIRLOCK_FEATURE_REQUIRED',
  'AIRLOCK_FEATURE_UNAVAILABLE',
  'AIRLOCK_FORBIDDEN',
  'AIRLOCK_HTML_TRANSFORM',
  'AIRLOCK_INTERNAL',
  'AIRLOCK_INTERRUPTED',
  'AIRLOCK_JOB_FAILED',
  'AIRLOCK_KEYS_DIR',
  'AIRLOCK_KEY_MODE',
  'AIRLOCK_KEY_WRITE',
  'AIRLOCK_LEASED',
  'AIRLOCK_LINK',
  'AIRLOCK_LINK_EXPIRED',
  'AIRLOCK_LISTEN',
  'AIRLOCK_LOCK_LOST',
  'AIRLOCK_MD5_MISMATCH',
  'AIRLOCK_MIRROR_SECRET',
  'AIRLOCK_MIRROR_TOKENS',
  'AIRLOCK_MIRROR_UNREACHABLE',
  'AIRLOCK_MISSING_FILE',
  'AIRLOCK_NETWORK',
  'AIRLOCK_NOTHING_TO_SERVE',
  'AIRLOCK_NOT_AN_ARCHIVE',
  'AIRLOCK_NOT_A_FILE',
  'AIRLOCK_NOT_A_PACKAGE',
  'AIRLOCK_NOT_FOUND',
  'AIRLOCK_NOT_READY',
  'AIRLOCK_NO_ACTIVE',
  'AIRLOCK_NO_INDEX',
  'AIRLOCK_NO_LIBRARY',
  'AIRLOCK_NO_PREVIOUS',
  'AIRLOCK_NO_SITE',
  'AIRLOCK_NO_SOURCE',
  'AIRLOCK_NO_SPACE',
  'AIRLOCK_NO_STORE',
  'AIRLOCK_NO_SUCH_FILE',
  'AIRLOCK_OUT_DIR',
  'AIRLOCK_OUT_PATH',
  'AIRLOCK_PACKAGE_CHANGED',
  'AIRLOCK_PACKAGE_HEADER',
  'AIRLOCK_PACKAGE_MEMBERS',
  'AIRLOCK_PACKAGE_NOT_TAR',
  'AIRLOCK_POLICY_BROKEN',
  'AIRLOCK_POLICY_REPLAY',
  'AIRLOCK_POLICY_SERIAL',
  'AIRLOCK_POLICY_THRESHOLD',
  'AIRLOCK_SHA256_MISMATCH',
  'AIRLOCK_SIZE_MISMATCH',
  'AIRLOCK_SPECIAL_FILE',
  'AIRLOCK_STORE_LOCKED',
  'AIRLOCK_STORE_PATH',
  'AIRLOCK_STORE_READONLY',
  'AIRLOCK_STREAM_TRUNCATED',
  'AIRLOCK_THRESHOLD',
  'AIRLOCK_TIMEOUT',
  'AIRLOCK_TLS_FILE',
  'AIRLOCK_TMPDIR',
  'AIRLOCK_TOO_LARGE',
  'AIRLOCK_TOO_MANY_FILES',
  'AIRLOCK_TOO_MANY_SIGNATURES',
  'AIRLOCK_TRUNCATED',
  'AIRLOCK_UNAUTHORIZED',
  'AIRLOCK_UNKNOWN_DEPLOYMENT',
  'AIRLOCK_UNKNOWN_FEATURE',
  'AIRLOCK_UNSAFE_PATH',
  'AIRLOCK_UNSIGNED',
  'AIRLOCK_UNSUPPORTED',
  'AIRLOCK_UNTRUSTED_SIGNATURE',
  'AIRLOCK_UPSTREAM',
  'AIRLOCK_UPSTREAM_SCHEMA',
  'AIRLOCK_USAGE',
  'AIRLOCK_VENDOR_DIGEST',
  'AIRLOCK_VENDOR_FETCH',
  'AIRLOCK_VENDOR_INSECURE',
  'AIRLOCK_VENDOR_LIMIT',
  'AIRLOCK_VENDOR_MEMBERS',
  'AIRLOCK_VENDOR_PRIVATE',
  'AIRLOCK_VENDOR_TYPE',
  'AIRLOCK_VERSION_CONFLICT',
  'AIRLOCK_VERSION_MISMATCH',
  'AIRLOCK_VERSION_NOT_FOUND',
  'AIRLOCK_VOLUME_DIGEST',
  'AIRLOCK_VOLUME_DUPLICATE',
  'AIRLOCK_VOLUME_FOREIGN',
  'AIRLOCK_VOLUME_HEADER',
  'AIRLOCK_VOLUME_MISSING',
  'AIRLOCK_VOLUME_MIXED',
  'AIRLOCK_VOLUME_NOT_A_FILE',
  'AIRLOCK_VOLUME_ORDER',
  'AIRLOCK_VOLUME_SIGNER',
  'AIRLOCK_VOLUME_SIZE',
  'AIRLOCK_VOLUME_TABLE',
  'AIRLOCK_VOLUME_TRUNCATED',
  'AIRLOCK_WRONG_KEY_TYPE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorDetails {
  /** The offending thing: an archive entry, a package member, a file, a header, a flag. */
  subject?: string;
  [key: string]: unknown;
}

export class AirlockError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: ExitCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, exitCode: ExitCode = EXIT.FAILURE, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
    this.details = details;
  }

  toJSON(): Record<string, unknown> {
    return { error: this.message, code: this.code, exitCode: this.exitCode, ...this.details };
  }
}

/** Bad flags, bad values files, bad environment: exit 2. */
export class UsageError extends AirlockError {
  constructor(message: string, details: ErrorDetails = {}, code: ErrorCode = 'AIRLOCK_USAGE') {
    super(code, message, EXIT.USAGE, details);
  }
}

/**
 * An output the command would create is already there (a package, a key, a policy draft): exit 2,
 * like every usage error, because the user fixes it by choosing another path (or removing the
 * file; `--force` where a command has one). Never replaced, whichever command meets it.
 */
export function outputExists(path: string, hint = 'remove it first or choose another --out'): UsageError {
  return new UsageError(`${path} already exists; ${hint}`, { subject: path }, 'AIRLOCK_EXISTS');
}

/**
 * A command line that does not parse (an unknown option, a missing value): exit 2. The command's
 * name is filled in by the CLI (`forCommand`), so the message names it and points at its --help.
 */
export class ArgvError extends UsageError {
  constructor(
    readonly problem: string,
    readonly hint: string,
    subject: string,
  ) {
    super(`${problem}${hint}`, { subject });
  }

  /** "unknown option --hlep for airlock import; did you mean --help? see airlock import --help" */
  forCommand(name: string): this {
    this.message = `${this.problem} for airlock ${name}${this.hint}${this.hint.endsWith('?') ? ' ' : '; '}see airlock ${name} --help`;
    return this;
  }
}

/**
 * Anything that makes an archive or package untrustworthy: exit 4. `subject` names the entry or
 * member at fault so the user can find it.
 */
export class VerificationError extends AirlockError {
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(code, message, EXIT.VERIFICATION, details, options);
  }
}

/** An archive entry that breaks a rule of "Archive safety" (path escape, link, device, bomb...). */
export class UnsafeArchiveError extends VerificationError {}
/** A digest or size that does not match what was promised (manifest, sizeBytes, ETag). */
export class DigestMismatchError extends VerificationError {}
/** Missing, bad or untrusted signature; unsigned package without --allow-unsigned. */
export class SignatureError extends VerificationError {}
/** A package or archive that cannot be parsed as what it claims to be. */
export class MalformedError extends VerificationError {}

/** The export job reported `failed` upstream: exit 3. */
export class UpstreamJobFailedError extends AirlockError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('AIRLOCK_JOB_FAILED', message, EXIT.UPSTREAM_JOB_FAILED, details);
  }
}

/** Wrong key type, missing key, 401 or 403 from the API: exit 5. */
export class AuthError extends AirlockError {
  constructor(message: string, details: ErrorDetails = {}, code: ErrorCode = 'AIRLOCK_AUTH') {
    super(code, message, EXIT.AUTH, details);
  }
}

/** The service answered with an error we could not recover from (after retries): exit 1. */
export class UpstreamError extends AirlockError {
  readonly status: number | undefined;
  constructor(message: string, status?: number, details: ErrorDetails = {}, code: ErrorCode = 'AIRLOCK_UPSTREAM') {
    super(code, message, EXIT.FAILURE, { status, ...details });
    this.status = status;
  }
}

/** Store-level refusals and faults: version conflicts, unknown versions, lock timeouts, no space. */
export class StoreError extends AirlockError {
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, exitCode: ExitCode = EXIT.FAILURE) {
    super(code, message, exitCode, details);
  }
}

/** Wraps anything thrown that is not ours, so the CLI always has a code to print. */
export function toAirlockError(err: unknown): AirlockError {
  if (err instanceof AirlockError) return err;
  const e = err as NodeJS.ErrnoException;
  if (e && typeof e === 'object' && typeof e.code === 'string' && e.code === 'ENOSPC') {
    return new AirlockError('AIRLOCK_NO_SPACE', `no space left on device${e.path ? `: ${e.path}` : ''}`, EXIT.FAILURE, { subject: e.path }, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new AirlockError('AIRLOCK_INTERNAL', message, EXIT.FAILURE, {}, { cause: err });
}
