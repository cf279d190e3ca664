import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AirlockError, EXIT, UsageError } from '../errors.js';
import { outputExists } from '../package/index.js';

/** The errno codes that mean "this --out cannot be used as given": the user's to fix (exit 2). */
const USAGE_CODES = new Set(['ENOTDIR', 'EEXIST', 'EACCES', 'EPERM', 'EROFS', 'ELOOP', 'ENAMETOOLONG']);

function outDirError(dir: string, err: unknown): AirlockError {
  const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
  const why = code === 'ENOTDIR' || code === 'EEXIST' ? 'it is not a folder' : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
    : code === 'EROFS' ? 'read-only file system' : code;
  if (USAGE_CODES.has(code)) return new UsageError(`cannot write the package into --out ${dir}: ${why}`, { subject: dir }, 'AIRLOCK_OUT_DIR');
  return new AirlockError('AIRLOCK_OUT_DIR', `cannot write the package into --out ${dir}: ${why}`, EXIT.FAILURE, { subject: dir }, { cause: err });
}

/**
 * Before any request: the output folder must be writable — or, when it does not exist yet, the
 * nearest folder above it that does — so a long export and download never end in EACCES.
 * Nothing is created here (a fetch refused early leaves no empty folder behind).
 */
export async function checkOutDir(dir: string): Promise<void> {
  for (let d = dir; ; d = dirname(d)) {
    let isDir: boolean;
    try {
      isDir = (await stat(d)).isDirectory();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && dirname(d) !== d) continue;
      throw outDirError(dir, err);
    }
    if (!isDir) throw outDirError(dir, Object.assign(new Error('not a folder'), { code: 'ENOTDIR' }));
    await access(d, constants.W_OK | constants.X_OK).catch((err: unknown) => { throw outDirError(dir, err); });
    return;
  }
}

/** Create the output folder when the first byte is about to be written into it. */
export async function makeOutDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true }).catch((err: unknown) => { throw outDirError(dir, err); });
}

/** An existing package is never replaced: refuse before the export, the link or the download it would waste. */
export async function refuseExisting(path: string, hint: string): Promise<void> {
  if (await access(path).then(() => true, () => false)) throw outputExists(path, hint);
}
