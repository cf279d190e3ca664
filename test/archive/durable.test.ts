/**
 * Durability of an extracted tree: on Linux the whole file system is flushed once at the end
 * (`sync -f DEST`, syncfs) instead of an fsync per file; where that fails (no `sync -f`), every
 * file and folder is fsynced by name, wrapping folder stripped or not.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { extractArchive } from '../../src/archive/index.js';
import { siteFiles, tgz } from '../helpers/evil-archives.js';
import { sandbox, type Sandbox } from './sandbox.js';

/** The system's `sync` as the extraction runs it: each call recorded; it runs for real or fails. */
const sync = vi.hoisted(() => ({ calls: [] as string[], works: true }));
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  const execFile = (file: string, args: string[], opts: object, cb: (err: Error | null) => void) => {
    if (!file.endsWith('/sync')) return real.execFile(file, args, opts, cb);
    sync.calls.push(`${file} ${args.join(' ')}`);
    if (!sync.works) return void setImmediate(() => cb(new Error('sync: invalid option -- f')));
    return real.execFile(file, args, opts, cb);
  };
  return { ...real, execFile };
});

const SYSTEM_SYNC = existsSync('/usr/bin/sync') ? '/usr/bin/sync' : '/bin/sync';

let sb: Sandbox;
beforeEach(async () => {
  sb = await sandbox();
  sync.calls = [];
});
afterEach(async () => {
  await sb.cleanup();
});

/** The calls of the system's own `sync` (never one found on PATH) from now on. */
function fakeSync(works: boolean): { calls: () => string[] } {
  sync.works = works;
  return { calls: () => sync.calls };
}

describe('extracted trees are made durable', () => {
  it('with one flush of the file system (sync -f DEST), not one fsync per file', async () => {
    const log = fakeSync(true);
    const archive = await sb.put('a.tar.gz', tgz(siteFiles('site/')));
    const scan = await extractArchive({ path: archive }, sb.dest);
    expect(scan.files.length).toBeGreaterThan(2);
    expect(log.calls()).toEqual([`${SYSTEM_SYNC} -f ${sb.dest}`]);
  });

  for (const prefix of ['site/', '']) {
    it(`by fsyncing each file and folder when the flush is not available (${prefix ? 'wrapping folder stripped' : 'no wrapping folder'})`, async () => {
      const log = fakeSync(false);
      const files = siteFiles(prefix);
      const archive = await sb.put('a.tar.gz', tgz(files));
      const scan = await extractArchive({ path: archive }, sb.dest);
      expect(log.calls()).toEqual([`${SYSTEM_SYNC} -f ${sb.dest}`]);
      for (const f of files) expect(await readFile(join(sb.dest, f.name.slice(prefix.length)), 'utf8')).toBe(String(f.data));
      expect(scan.files.map((f) => f.path).sort()).toEqual(files.map((f) => f.name.slice(prefix.length)).sort());
    });
  }
});
