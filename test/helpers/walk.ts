import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Every file under `dir`, as a path relative to `base` with forward slashes (folders recursed, not listed). */
export async function walk(dir: string, base = dir): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p, base)));
    else out.push(relative(base, p).split('\\').join('/'));
  }
  return out;
}
