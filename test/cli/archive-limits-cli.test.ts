import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writePackage, type Manifest } from '../../src/package/index.js';
import { airlockAsync } from '../helpers/bin.js';
import { siteFiles, zip, type ZipEntry } from '../helpers/evil-archives.js';
import { makePackage } from '../helpers/make-package.js';
import { treeDigest } from '../store/helpers.js';

/**
 * Archive safety: more files than the limit (200,000) is exit 4. A zip says how many
 * entries it has in its central directory, so it is refused before a single file is written
 * (import used to write and fsync all 200,000 files first).
 */
let root: string;
let zipPath: string;
let pkgPath: string;
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'airlock-limits-cli-'));
  const entries: ZipEntry[] = siteFiles().map((f) => ({ ...f, method: 0 }));
  for (let i = 0; entries.length < 200_001; i++) entries.push({ name: `d/${i}`, method: 0 });
  const bytes = zip(entries);
  zipPath = join(root, 'export.zip');
  await writeFile(zipPath, bytes);
  // The manifest lists the three real pages only: the archive's own count is what must stop the import.
  const manifest: Manifest = {
    format: 'airlock-package/1',
    domain: 'docs.example.com',
    version: 'many',
    jobId: null,
    createdAt: '2025-01-15T12:00:00Z',
    pageCount: 2,
    archive: { name: 'bundle.zip', format: 'zip', size: bytes.length, sha256: sha(bytes) },
    files: siteFiles().map((f) => ({ path: f.name, size: Buffer.byteLength(f.data), sha256: sha(f.data) })),
  };
  pkgPath = join(root, 'many.airlock');
  await writePackage({ outPath: pkgPath, manifest, archivePath: zipPath });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('a zip over the file-count limit (200,001 entries)', () => {
  it('import: exit 4 AIRLOCK_TOO_MANY_FILES naming the entry, and the store is byte-identical', async () => {
    const store = join(root, 'store');
    const good = await makePackage({ outDir: join(root, 'good') });
    expect((await airlockAsync(['import', good.pkgPath, '--store', store, '--allow-unsigned', '--activate'])).status).toBe(0);
    const before = await treeDigest(store);
    const r = await airlockAsync(['import', pkgPath, '--store', store, '--allow-unsigned'], { timeoutMs: 60_000 });
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toContain('AIRLOCK_TOO_MANY_FILES');
    expect(r.stderr).toContain('"d/199997"');
    expect(await treeDigest(store)).toBe(before);
  });

  it('preview: exit 4 before anything is written, and its temp folder is gone', async () => {
    const tmp = join(root, 'tmp');
    await mkdir(tmp);
    const r = await airlockAsync(['preview', zipPath, '--port', '0'], { env: { TMPDIR: tmp }, timeoutMs: 60_000 });
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toContain('AIRLOCK_TOO_MANY_FILES');
    expect(r.stdout).toBe('');
    expect(await readdir(tmp)).toEqual([]);
  });

  it('verify: exit 4 with the same code (it extracts nothing)', async () => {
    const r = await airlockAsync(['verify', pkgPath, '--allow-unsigned'], { timeoutMs: 60_000 });
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toContain('AIRLOCK_TOO_MANY_FILES');
  });
});
