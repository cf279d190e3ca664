import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPackage } from '../../src/package/reader.js';
import { verifyPackage } from '../../src/package/verify.js';
import { encodeHeader } from '../../src/package/tar-header.js';
import { makePackage } from '../helpers/make-package.js';
import { flip, tarMember } from './craft.js';
import { writePackage } from '../../src/package/writer.js';

let dir: string;
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-pkg-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('writePackage / readPackage', () => {
  it('refuses, before writing a byte, a manifest larger than readers accept (long paths at scale): exit 4 AIRLOCK_BAD_MANIFEST naming both sizes', async () => {
    const { archivePath, manifest } = await makePackage({ outDir: join(dir, 'too-long') });
    const segment = 'p'.repeat(200);
    const path = (i: number) => `${Array.from({ length: 20 }, () => segment).join('/')}/${String(i).padStart(8, '0')}.html`; // ~4 KiB, under the path limit
    const files = Array.from({ length: 34_000 }, (_, i) => ({
      path: path(i),
      size: 0,
      sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    }));
    const outPath = join(dir, 'too-long', 'big.airlock');
    const err = await writePackage({ outPath, manifest: { ...manifest, files }, archivePath }).then(
      () => null,
      (e: Error & { code: string; exitCode: number }) => e,
    );
    expect(err).toMatchObject({ code: 'AIRLOCK_BAD_MANIFEST', exitCode: 4 });
    expect(err!.message).toMatch(/^airlock\.json would be \d{9} bytes, more than the limit of 134217728 that verify and import accept/);
    expect(await readdir(join(dir, 'too-long'))).not.toContain('big.airlock');
    expect((await readdir(join(dir, 'too-long'))).filter((n) => n.includes('.tmp'))).toEqual([]);
  }, 60_000);

  it("refuses to write an invalid manifest naming the fields in words, never the validation library's", async () => {
    const { archivePath, manifest } = await makePackage({ outDir: join(dir, 'invalid') });
    const bad = { ...manifest, version: 7, files: [{ path: 'a.html', size: '1' }], archive: [] } as unknown as typeof manifest;
    const err = await writePackage({ outPath: join(dir, 'invalid', 'bad.airlock'), manifest: bad, archivePath }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toMatchObject({ code: 'AIRLOCK_USAGE' });
    expect(err!.message).toMatch(/^refusing to write an invalid manifest: .*version: must be a text string/);
    expect(err!.message).not.toMatch(/Invalid input|expected \w+, received|Too big|Too small|Unrecognized key|Invalid option/);
  });

  it('writes exactly airlock.json, airlock.json.sig, bundle.tar.gz in that order (GNU tar agrees)', async () => {
    const { pkgPath } = await makePackage({ outDir: join(dir, 'order'), signKey: privateKey });
    const listing = execFileSync('tar', ['-tvf', pkgPath], { encoding: 'utf8' }).trim().split('\n');
    expect(listing.map((l) => l.split(/\s+/).pop())).toEqual(['airlock.json', 'airlock.json.sig', 'bundle.tar.gz']);
    for (const l of listing) expect(l).toMatch(/^-rw-r--r-- 0\/0 .* 2025-01-15 12:00 /);
  });

  it('the archive member is the archive byte for byte, found by offset without reading it', async () => {
    for (const format of ['tar.gz', 'zip', 'tar'] as const) {
      const { pkgPath, archivePath, manifest } = await makePackage({ outDir: join(dir, `range-${format}`), format });
      const layout = await readPackage(pkgPath);
      expect(layout.signature).toBeNull();
      expect(layout.manifest).toEqual(manifest);
      const pkg = await readFile(pkgPath);
      expect(pkg.subarray(layout.archive.offset, layout.archive.offset + layout.archive.size).equals(await readFile(archivePath))).toBe(true);
      expect(layout.archive.offset % 512).toBe(0);
    }
  });

  it('is deterministic: the same manifest and archive give the same package bytes', async () => {
    const a = await makePackage({ outDir: join(dir, 'det-a'), format: 'zip', signKey: privateKey });
    const b = await makePackage({ outDir: join(dir, 'det-b'), format: 'zip', signKey: privateKey });
    const digest = async (p: string) =>
      createHash('sha256')
        .update(await readFile(p))
        .digest('hex');
    expect(await digest(a.pkgPath)).toBe(await digest(b.pkgPath));
  });

  it('verifies a wrapped archive (single folder stripped) in each format', async () => {
    for (const format of ['tar.gz', 'zip', 'tar'] as const) {
      const { pkgPath, manifest } = await makePackage({ outDir: join(dir, `wrap-${format}`), format, wrap: true, signKey: privateKey });
      const r = await verifyPackage(pkgPath, { trust: [publicKey] });
      expect(r).toMatchObject({ signed: true, files: manifest.files.length });
      expect(r.signer).toMatch(/^sha256:/);
    }
  });

  it('refuses to package an archive that changed since it was scanned, leaving no file and no temp behind', async () => {
    const out = join(dir, 'changed');
    const { manifest, archivePath } = await makePackage({ outDir: out });
    const bytes = await readFile(archivePath);
    flip(bytes, bytes.length - 10);
    await writeFile(archivePath, bytes);
    const target = join(out, 'changed.airlock');
    await expect(writePackage({ outPath: target, manifest, archivePath })).rejects.toMatchObject({ code: 'AIRLOCK_ARCHIVE_CHANGED', exitCode: 4 });
    expect((await readdir(out)).filter((f) => f.includes('changed.airlock'))).toEqual([]);
  });

  it('reads only the head: a 16 GiB (sparse) package is inspected at once, with its base-256 size', async () => {
    const path = join(dir, 'huge.airlock');
    const { manifest } = await makePackage({ outDir: join(dir, 'huge-src') });
    const size = 16 * 1024 ** 3;
    const manifestBytes = Buffer.from(JSON.stringify({ ...manifest, archive: { ...manifest.archive, size } }));
    const fh = await open(path, 'w');
    try {
      const head = Buffer.concat([tarMember({ name: 'airlock.json', data: manifestBytes }), encodeHeader('bundle.tar.gz', size, new Date(0))]);
      await fh.write(head, 0, head.length, 0);
      await fh.truncate(head.length + size + 1024); // sparse body and zero end blocks
    } finally {
      await fh.close();
    }
    expect((await stat(path)).size).toBeGreaterThan(size);
    const t0 = performance.now();
    const layout = await readPackage(path);
    expect(performance.now() - t0).toBeLessThan(2000); // reading 16 GiB would take far longer
    expect(layout.archive.size).toBe(size);
  });
});
