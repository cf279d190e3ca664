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

export interface ErrorDetails {
  /** The offending thing: an archive entry, a package member, a file, a header, a flag. */
  subject?: string;
  [key: string]: unknown;
}

export class AirlockError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  readonly details: ErrorDetails;

  constructor(code: string, message: string, exitCode: ExitCode = EXIT.FAILURE, details: ErrorDetails = {}, options?: { cause?: unknown }) {
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
  constructor(message: string, details: ErrorDetails = {}, code = 'AIRLOCK_USAGE') {
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
  constructor(readonly problem: string, readonly hint: string, subject: string) {
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
  constructor(code: string, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
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
  constructor(message: string, details: ErrorDetails = {}, code = 'AIRLOCK_AUTH') {
    super(code, message, EXIT.AUTH, details);
  }
}

/** The service answered with an error we could not recover from (after retries): exit 1. */
export class UpstreamError extends AirlockError {
  readonly status: number | undefined;
  constructor(message: string, status?: number, details: ErrorDetails = {}, code = 'AIRLOCK_UPSTREAM') {
    super(code, message, EXIT.FAILURE, { status, ...details });
    this.status = status;
  }
}

/** Store-level refusals and faults: version conflicts, unknown versions, lock timeouts, no space. */
export class StoreError extends AirlockError {
  constructor(code: string, message: string, details: ErrorDetails = {}, exitCode: ExitCode = EXIT.FAILURE) {
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
