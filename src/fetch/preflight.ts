import { access, mkdir } from 'node:fs/promises';
import { AirlockError, EXIT, UsageError } from '../errors.js';
import { outputExists } from '../package/index.js';
import { describeFsError } from '../util/fsx.js';
import { outFolderProblem } from '../util/out-folder.js';

/** The errno codes that mean "this --out cannot be used as given": the user's to fix (exit 2). */
const USAGE_CODES = new Set(['ENOTDIR', 'EEXIST', 'EACCES', 'EPERM', 'EROFS', 'ELOOP', 'ENAMETOOLONG']);

function outDirError(dir: string, err: unknown): AirlockError {
  const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
  const why = code === 'ENOTDIR' || code === 'EEXIST' ? 'it is not a folder' : describeFsError(err, 'write');
  if (USAGE_CODES.has(code)) return new UsageError(`cannot write the package into --out ${dir}: ${why}`, { subject: dir }, 'AIRLOCK_OUT_DIR');
  return new AirlockError('AIRLOCK_OUT_DIR', `cannot write the package into --out ${dir}: ${why}`, EXIT.FAILURE, { subject: dir }, { cause: err });
}

/**
 * Before any request: the output folder must be writable — or, when it does not exist yet, the
 * nearest folder above it that does — so a long export and download never end in EACCES.
 * Nothing is created here (a fetch refused early leaves no empty folder behind).
 */
export async function checkOutDir(dir: string): Promise<void> {
  const why = await outFolderProblem(dir);
  if (why !== null) throw new UsageError(`cannot write the package into --out ${dir}: output folder ${dir} ${why}`, { subject: dir }, 'AIRLOCK_OUT_DIR');
}

/** Create the output folder when the first byte is about to be written into it. */
export async function makeOutDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true }).catch((err: unknown) => {
    throw outDirError(dir, err);
  });
}

/** An existing package is never replaced: refuse before the export, the link or the download it would waste. */
export async function refuseExisting(path: string, hint: string): Promise<void> {
  if (
    await access(path).then(
      () => true,
      () => false,
    )
  )
    throw outputExists(path, hint);
}
