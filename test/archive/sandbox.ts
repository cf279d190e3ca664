import { mkdtemp, mkdir, readdir, rm, writeFile, lstat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expect } from 'vitest';
import { AirlockError, EXIT } from '../../src/errors.js';

/**
 * A temp tree for one test: root/work/staging is the extraction folder, root/outside and
 * root/work/beside are marker folders next to it. `outsideSnapshot()` lists everything except
 * staging, so "nothing written outside destDir" is an equality of two snapshots.
 */
export interface Sandbox {
  root: string;
  dest: string;
  put(name: string, bytes: Buffer): Promise<string>;
  outsideSnapshot(): Promise<string[]>;
  cleanup(): Promise<void>;
}

export async function sandbox(): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), 'airlock-archive-'));
  const dest = join(root, 'work', 'staging');
  await mkdir(join(root, 'outside'), { recursive: true });
  await mkdir(join(root, 'work', 'beside'), { recursive: true });
  await writeFile(join(root, 'outside', 'marker.txt'), 'marker');
  await writeFile(join(root, 'work', 'beside', 'marker.txt'), 'marker');
  const walk = async (dir: string, out: string[]) => {
    for (const name of await readdir(dir)) {
      const p = join(dir, name);
      if (p === dest) continue;
      out.push(relative(root, p));
      if ((await lstat(p)).isDirectory()) await walk(p, out);
    }
    return out;
  };
  return {
    root,
    dest,
    async put(name, bytes) {
      const p = join(root, 'in', name);
      await mkdir(join(root, 'in'), { recursive: true });
      await writeFile(p, bytes);
      return p;
    },
    outsideSnapshot: async () => (await walk(root, [])).sort(),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** The refusal is a typed exit-4 error with the stable code, naming the entry as the archive spelt it. */
export async function expectRefusal(
  p: Promise<unknown>,
  cls: new (...a: never[]) => AirlockError,
  code: string,
  subject: string | RegExp,
): Promise<AirlockError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected a refusal').toBeInstanceOf(cls);
  const e = err as AirlockError;
  expect(e.code).toBe(code);
  expect(e.exitCode).toBe(EXIT.VERIFICATION);
  if (typeof subject === 'string') expect(e.details.subject).toBe(subject);
  else expect(String(e.details.subject)).toMatch(subject);
  return e;
}
