import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Temp files this process writes end in `.<pid>.<hex>.tmp` (util/fsx tempSibling, variants, HTML cache). */
const own = (name: string) => name.endsWith('.tmp') && name.includes(`.${process.pid}.`);

/** Remove this process's temp files in `dir` (not recursive); a missing folder has none. */
export async function removeOwnTemp(dir: string): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) if (own(name)) await rm(join(dir, name), { force: true });
}
