import { constants } from 'node:fs';
import { access, lstat, mkdir, readlink, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describeFsError, kindOf } from './fs-words.js';
import { quoted } from './terminal.js';

/**
 * The one check of an output folder a user names (`pack`, `delta`, `fetch --out DIR`) and of
 * TMPDIR: the folder, or when it does not exist yet the nearest folder above it that does, must be
 * a folder this process may write into. Nothing is created here, so a command refused early leaves
 * no empty folder behind. A dangling symbolic link on the way is named as one (creating the folder
 * would fail, or put it wherever the link points), never as a folder that "does not exist".
 *
 * Returns null when the folder can be used (or made), else the reason in words, completing
 * "output folder DIR …".
 */
export async function outFolderProblem(dir: string): Promise<string | null> {
  for (let d = dir; ; d = dirname(d)) {
    // "output folder DIR is …" for the folder itself; "output folder DIR cannot be made: D is …" for one above it.
    const is = (words: string) => (d === dir ? words : `cannot be made: ${d} ${words}`);
    const st = await lstat(d).catch((err: NodeJS.ErrnoException) => err);
    if (st instanceof Error) {
      if (st.code === 'ENOENT' && dirname(d) !== d) continue;
      return is(describeFsError(st));
    }
    if (st.isSymbolicLink()) {
      const target = await stat(d).catch((err: NodeJS.ErrnoException) => err);
      if (target instanceof Error) {
        if (target.code !== 'ENOENT') return is(describeFsError(target));
        return is(`is a symbolic link to ${quoted(await readlink(d).catch(() => '?'))}, which does not exist`);
      }
      if (!target.isDirectory()) return is(`is a symbolic link to ${kindOf(target)}, not to a folder`);
    } else if (!st.isDirectory()) {
      return is(`is ${kindOf(st)}, not a folder`);
    }
    const denied = await access(d, constants.W_OK | constants.X_OK).then(
      () => null,
      (err: unknown) => err,
    );
    if (denied !== null) return is(`is not writable (${describeFsError(denied, 'write')})`);
    return null;
  }
}

/** Make the output folder (and its missing parents) once the first byte is about to be written; the reason in words on failure. */
export async function makeOutFolder(dir: string): Promise<string | null> {
  const why = await outFolderProblem(dir);
  if (why !== null) return why;
  return mkdir(dir, { recursive: true }).then(
    () => null,
    (err: unknown) => describeFsError(err, 'write'),
  );
}
