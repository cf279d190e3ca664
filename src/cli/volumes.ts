import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { isVolume, parseSplitSize } from '../package/volumes/index.js';
import { openInputFile } from '../package/reader.js';
import { describeFsError, kindOf } from '../util/fsx.js';

/** `--split SIZE` on pack, fetch and delta: checked before any work (exit 2). */
export const SPLIT_HELP = `  --split SIZE        write volumes NAME.airlock.001, .002, … of at most SIZE bytes each instead of one
                      file: bytes with K/M/G (powers of 1024) or KB/MB/GB (of 1000), or a preset:
                      fat32 (4000 MiB), dvd (4482 MiB), bd25 (23841 MiB)`;
export const VOLUMES_HELP = `  --volumes DIR,...   the package is split into volumes: look for the others in these folders too
                      (besides the folders of the volumes given); PKG may be any volume, or several`;

export const splitOption = (v: string | undefined): number | undefined => (v === undefined ? undefined : parseSplitSize(v));

export type PackageArgs = { kind: 'file'; path: string } | { kind: 'volumes'; paths: string[]; dirs: string[] };

/** PKG positionals and --volumes: one package file, or a set of volumes (by content, not name). */
export async function packageArgs(positionals: string[], volumes: string[] | undefined, cwd: string): Promise<PackageArgs> {
  if (positionals.length === 0) throw new UsageError('give a package path (or its volumes)', { subject: 'PKG' });
  const paths = positionals.map((p) => resolve(cwd, p));
  const dirs = (volumes ?? [])
    .flatMap((v) => v.split(','))
    .filter((d) => d !== '')
    .map((d) => resolve(cwd, d));
  // Each folder the user typed is one: a FIFO, a device, a file or a missing name is refused, not skipped.
  for (const d of dirs) {
    const st = await stat(d).catch((err: unknown) => {
      throw new UsageError(`--volumes: ${d} ${describeFsError(err)}; give folders that hold volumes`, { subject: d });
    });
    if (!st.isDirectory()) throw new UsageError(`--volumes: ${d} is ${kindOf(st)}, not a folder; give folders that hold volumes`, { subject: d });
  }
  if (paths.length === 1 && dirs.length === 0 && !(await isVolume(paths[0]!))) {
    // A regular file, or refused here in words (a FIFO, a device, a folder, a loop, missing), before any command reads it.
    await (await openInputFile(paths[0]!, 'package')).close();
    return { kind: 'file', path: paths[0]! };
  }
  for (const p of paths) {
    await (await openInputFile(p, 'volume')).close();
    if (!(await isVolume(p)))
      throw new UsageError(`${p} is not a package volume (NAME.airlock.NNN); give one package file, or volumes of one package`, { subject: p });
  }
  return { kind: 'volumes', paths, dirs };
}
