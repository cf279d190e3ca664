import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { buildVariants, importPackage, loadVersion } from '../../src/store/index.js';
import { selectForVariants, isCompressibleType } from '../../src/store/variants/select.js';
import { buildPackage, makeTempDir, sampleSite } from './helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('precompressed variants', () => {
  it('selects text types of at least 1 KB, once per digest', () => {
    const f = (path: string, size: number, sha = path.padEnd(64, '0')) => ({ path, size, sha256: sha });
    const picked = selectForVariants([
      f('a.html', 5000),
      f('b.png', 5000),
      f('c.css', 100),
      f('d.js', 2000, 'd'.repeat(64)),
      f('e.js', 2000, 'd'.repeat(64)),
      f('s.svg', 4000),
    ]);
    expect(picked.map((p) => p.path)).toEqual(['a.html', 'd.js', 's.svg']);
    expect(isCompressibleType('application/json')).toBe(true);
    expect(isCompressibleType('image/png')).toBe(false);
  });

  it('builds br and gzip variants that decompress to the file, listed in variants/index.json', async () => {
    const store = join(dir, 'store');
    const pkg = await buildPackage(dir, { version: 'v1', files: sampleSite('v', 3) });
    await importPackage(pkg, { store, trust: [], allowUnsigned: true });
    const seen: number[] = [];
    const report = await buildVariants(store, 'v1', { poolSize: 2, onProgress: (done) => seen.push(done) });
    const loaded = await loadVersion(store, 'v1');
    const html = loaded.manifest.files.find((f) => f.path === 'index.html')!;
    const png = loaded.manifest.files.find((f) => f.path === 'img/logo.png')!;
    expect(loaded.variants.get(png.sha256)).toBeUndefined();
    const entry = loaded.variants.get(html.sha256)!;
    expect(entry.br).toBeGreaterThan(0);
    const original = await readFile(join(loaded.siteDir, 'index.html'));
    expect(brotliDecompressSync(await readFile(loaded.variantPath(html.sha256, 'br')))).toEqual(original);
    expect(gunzipSync(await readFile(loaded.variantPath(html.sha256, 'gz')))).toEqual(original);
    expect(report.candidates).toBe(loaded.variants.size);
    expect(seen.at(-1)).toBe(report.candidates);
    expect((await readdir(loaded.dir + '/variants')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(await readdir(join(store, 'leases'))).toEqual([]); // lease released
    // Resumable and idempotent: a second run has nothing left to do.
    await expect(buildVariants(store, 'v1')).resolves.toMatchObject({ candidates: 0 });
  });

  it('a file changed in the store (same size, other bytes) is never compressed: no variant of bytes the package does not hold', async () => {
    const store = join(dir, 'store-changed');
    const pkg = await buildPackage(dir, { version: 'v1', files: sampleSite('c', 3) });
    await importPackage(pkg, { store, trust: [], allowUnsigned: true });
    const before = await loadVersion(store, 'v1');
    const html = before.manifest.files.find((f) => f.path === 'index.html')!;
    const file = join(before.siteDir, 'index.html');
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text.replace(/[a-z]/, (c) => c.toUpperCase()),
    ); // same size
    const report = await buildVariants(store, 'v1');
    expect(report.failed).toContain('index.html');
    expect((await loadVersion(store, 'v1')).variants.get(html.sha256)).toBeUndefined();
    expect((await readdir(join(before.dir, 'variants'))).filter((n) => n.startsWith(html.sha256))).toEqual([]);
  });

  it('stopped midway: rejects with the reason at once, the workers leave no temp file, and a later run finishes the rest', async () => {
    const store = join(dir, 'store-abort');
    const pkg = await buildPackage(dir, { version: 'v2', files: sampleSite('w', 3) });
    await importPackage(pkg, { store, trust: [], allowUnsigned: true });
    const stop = new AbortController();
    const reason = new Error('stopped by the test');
    let reported = 0;
    await expect(
      buildVariants(store, 'v2', {
        poolSize: 2,
        signal: stop.signal,
        onProgress: () => {
          if (++reported === 1) stop.abort(reason);
        },
      }),
    ).rejects.toBe(reason);
    const loaded = await loadVersion(store, 'v2');
    expect((await readdir(loaded.dir + '/variants')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(await readdir(join(store, 'leases'))).toEqual([]);
    const rest = await buildVariants(store, 'v2', { poolSize: 2 });
    expect(rest.failed).toEqual([]);
    expect((await loadVersion(store, 'v2')).variants.size).toBeGreaterThan(0);
  });
});
