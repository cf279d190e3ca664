/**
 * Durability of an extracted tree: on Linux the whole file system is flushed once at the end
 * (`sync -f DEST`, syncfs) instead of an fsync per file; where that fails (no `sync -f`), every
 * file and folder is fsynced by name, wrapping folder stripped or not.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { extractArchive } from '../../src/archive/index.js';
import { siteFiles, tgz } from '../helpers/evil-archives.js';
import { sandbox, type Sandbox } from './sandbox.js';

let sb: Sandbox;
let path: string | undefined;
beforeEach(async () => {
  sb = await sandbox();
  path = process.env.PATH;
});
afterEach(async () => {
  process.env.PATH = path;
  await sb.cleanup();
});

/** A `sync` first on PATH that logs its arguments, then runs the real one or fails. */
async function fakeSync(works: boolean): Promise<string> {
  const log = join(sb.root, 'sync.log');
  const bin = join(sb.root, 'outside');
  await writeFile(join(bin, 'sync'), `#!/bin/sh\necho "$@" >> "${log}"\n${works ? 'exec /bin/sync "$@"' : 'echo "sync: invalid option -- f" >&2; exit 1'}\n`);
  await chmod(join(bin, 'sync'), 0o755);
  process.env.PATH = `${bin}:${path}`;
  return log;
}

describe('extracted trees are made durable', () => {
  it('with one flush of the file system (sync -f DEST), not one fsync per file', async () => {
    const log = await fakeSync(true);
    const archive = await sb.put('a.tar.gz', tgz(siteFiles('site/')));
    const scan = await extractArchive({ path: archive }, sb.dest);
    expect(scan.files.length).toBeGreaterThan(2);
    expect((await readFile(log, 'utf8')).trim().split('\n')).toEqual([`-f ${sb.dest}`]);
  });

  for (const prefix of ['site/', '']) {
    it(`by fsyncing each file and folder when the flush is not available (${prefix ? 'wrapping folder stripped' : 'no wrapping folder'})`, async () => {
      const log = await fakeSync(false);
      const files = siteFiles(prefix);
      const archive = await sb.put('a.tar.gz', tgz(files));
      const scan = await extractArchive({ path: archive }, sb.dest);
      expect((await readFile(log, 'utf8')).trim()).toBe(`-f ${sb.dest}`);
      for (const f of files) expect(await readFile(join(sb.dest, f.name.slice(prefix.length)), 'utf8')).toBe(String(f.data));
      expect(scan.files.map((f) => f.path).sort()).toEqual(files.map((f) => f.name.slice(prefix.length)).sort());
    });
  }
});
