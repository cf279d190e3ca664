import { randomBytes } from 'node:crypto';
import { open, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Upper case for lower and lower for upper (ASCII): the probe's second spelling. */
function swapCase(s: string): string {
  return s.replace(/[A-Za-z]/g, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
}

/**
 * Does the file system holding `dir` fold letter case? Asked once per destination, by writing:
 * a file with a mixed-case name is created in `dir`, then its case-swapped name is looked up
 * (the same file → folding: Windows, macOS by default, ext4/F2FS casefold folders). The probe
 * file is removed before returning, whatever happens, so `dir` is left as it was. Names are
 * ASCII on purpose: folding rules beyond ASCII differ between file systems, and the registry
 * then refuses with full Unicode folding, the strictest of them.
 */
export async function probeCaseFolding(dir: string): Promise<boolean> {
  const name = `.airlock-case-probe-${randomBytes(6).toString('hex')}-Aa`;
  const path = join(dir, name);
  const fh = await open(path, 'wx', 0o600);
  await fh.close();
  try {
    const [mine, swapped] = await Promise.all([
      stat(path),
      stat(join(dir, swapCase(name))).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      }),
    ]);
    // Another file of that spelling (made by someone else meanwhile) has another inode; file
    // systems without inode numbers report 0: fail closed and call that folding.
    return swapped !== null && (swapped.ino === mine.ino || mine.ino === 0);
  } finally {
    await unlink(path).catch(() => {});
  }
}
