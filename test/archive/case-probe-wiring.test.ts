import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnsafeArchiveError } from '../../src/errors.js';
import { importPackage } from '../../src/store/index.js';
import { extractForPreview } from '../../src/serve/preview-source.js';
import { makeArchive, makePackage } from '../helpers/make-package.js';
import { treeDigest } from '../store/helpers.js';

/**
 * The other answer of the case probe, injected: on a store or preview folder whose file system
 * folds case (Windows, macOS by default), a case pair (rules/A001/ beside rules/a001/) is refused
 * naming both entries, and nothing is left behind. (This disk answers "no"; the case pair then
 * imports, see test/cli/real-exports-cli.test.ts.)
 */
const probe = vi.hoisted(() => ({ folds: true, calls: [] as string[] }));
vi.mock('../../src/archive/case-probe.js', () => ({
  probeCaseFolding: async (dir: string) => {
    probe.calls.push(dir);
    return probe.folds;
  },
}));

let root: string;
let site: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'airlock-casefold-'));
  site = join(root, 'site');
  const files: Array<[string, string]> = [
    ['index.html', '<h1>home</h1>'],
    ['rules/A001/index.html', '<h1>A001</h1>'],
    ['rules/a001/index.html', '<h1>a001</h1>'],
  ];
  for (const [p, body] of files) {
    await mkdir(join(site, p, '..'), { recursive: true });
    await writeFile(join(site, p), body);
  }
  probe.calls.length = 0;
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('case pairs where the destination folds case', () => {
  it('import probes the store once and refuses with AIRLOCK_CASE_COLLISION naming both entries; the store is unchanged', async () => {
    const store = join(root, 'store');
    const good = await makePackage({ outDir: join(root, 'good'), version: 'v1' });
    probe.folds = false;
    await importPackage(good.pkgPath, { store, trust: [], allowUnsigned: true, activate: true });
    const before = await treeDigest(store);
    probe.folds = true;
    probe.calls.length = 0;
    const { pkgPath } = await makePackage({ siteDir: site, outDir: join(root, 'pkg'), version: 'v2', format: 'zip' });
    const err = await importPackage(pkgPath, { store, trust: [], allowUnsigned: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeArchiveError);
    const e = err as UnsafeArchiveError;
    expect([e.code, e.exitCode, e.details.subject, e.details.earlier]).toEqual(['AIRLOCK_CASE_COLLISION', 4, 'rules/a001/index.html', 'rules/A001/index.html']);
    expect(probe.calls).toHaveLength(1);
    expect(probe.calls[0]!.startsWith(join(store, 'staging'))).toBe(true);
    expect(await treeDigest(store)).toBe(before);
  });

  it('preview probes its temp folder once, refuses the same way, and removes the folder', async () => {
    const tmp = join(root, 'tmp');
    await mkdir(tmp);
    const archive = join(root, 'pair.tar.gz');
    await makeArchive(site, 'tar.gz', archive);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      const err = await extractForPreview(archive).catch((e: unknown) => e);
      expect((err as UnsafeArchiveError).code).toBe('AIRLOCK_CASE_COLLISION');
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(probe.calls).toHaveLength(1);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('the same pair on a case-sensitive answer: preview extracts both', async () => {
    probe.folds = false;
    const archive = join(root, 'pair.tar');
    await makeArchive(site, 'tar', archive);
    const { dir, site: s } = await extractForPreview(archive);
    try {
      expect(s.files.map((f) => f.path)).toEqual(['index.html', 'rules/A001/index.html', 'rules/a001/index.html']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
