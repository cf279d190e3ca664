import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packArchive, readPackage, verifyPackage, writePackage, fingerprint } from '../../src/package/index.js';
import { makeArchive, makePackage, FIXTURE_SITE } from '../helpers/make-package.js';
import { siteTar, siteZip, tgz, siteFiles } from '../helpers/evil-archives.js';

/** `pack` (archive → scanned → manifest → package) and the raw-archive mistake. */
let dir: string;
let n = 0;
const fresh = async () => {
  const d = join(dir, `case-${++n}`);
  await mkdir(d, { recursive: true });
  return d;
};
const signer = generateKeyPairSync('ed25519');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-pack-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('packArchive', () => {
  it.each(['tar.gz', 'tar', 'zip'] as const)('%s: a signed package that verifies, with the scan as its manifest', async (format) => {
    const d = await fresh();
    const archivePath = join(d, `export.${format}`);
    await makeArchive(FIXTURE_SITE, format, archivePath, true);
    const r = await packArchive({ archivePath, domain: 'docs.example.com', version: 'v7', outDir: join(d, 'out'), signKey: signer.privateKey });
    expect(r).toMatchObject({ package: join(d, 'out', 'docs.example.com-v7.airlock'), version: 'v7', signed: true, signer: fingerprint(signer.publicKey) });
    const v = await verifyPackage(r.package, { trust: [signer.publicKey] });
    const pages = v.manifest.files.filter((f) => /\.html?$/.test(f.path) && f.path !== '404.html').length;
    expect(v.manifest).toMatchObject({ domain: 'docs.example.com', version: 'v7', jobId: null, pageCount: pages, archive: { format } });
    expect(pages).toBeGreaterThan(3); // the fixture's pages, 404.html aside: counted from the file list
    expect(v.files).toBe(r.files);
    expect(v.manifest.files.some((f) => f.path === 'index.html')).toBe(true); // the wrapping folder is stripped
  });

  it("default version label: the archive file's modification time, YYYYMMDD-HHMMSS UTC", async () => {
    const d = await fresh();
    const archivePath = join(d, 'export.zip');
    await writeFile(archivePath, siteZip());
    await utimes(archivePath, new Date('2026-03-04T05:06:07Z'), new Date('2026-03-04T05:06:07Z'));
    const r = await packArchive({ archivePath, domain: 'docs.example.com', outDir: d });
    expect(r.version).toBe('20260304-050607');
    expect(r.signed).toBe(false);
    expect((await readPackage(r.package)).signature).toBeNull();
  });

  it('zip-slip: an unsafe archive is refused (exit 4) and nothing is written, no temp file either', async () => {
    const d = await fresh();
    const archivePath = join(d, 'evil.tar.gz');
    await writeFile(archivePath, tgz([{ name: '../escape.html', data: 'x' }, ...siteFiles()]));
    await expect(
      packArchive({ archivePath, domain: 'docs.example.com', version: 'v1', outDir: join(d, 'out'), signKey: signer.privateKey }),
    ).rejects.toMatchObject({ exitCode: 4, code: 'AIRLOCK_UNSAFE_PATH', details: { subject: '../escape.html' } });
    expect(await readdir(join(d, 'out')).catch(() => [])).toEqual([]);
    expect(await readdir(d)).toEqual(['evil.tar.gz']);
  });

  it('an existing output is refused before the archive is read (AIRLOCK_EXISTS, exit 2), and kept', async () => {
    const d = await fresh();
    const archivePath = join(d, 'unreadable.tar');
    await writeFile(archivePath, 'not an archive at all');
    const out = join(d, 'docs.example.com-v1.airlock');
    await writeFile(out, 'precious');
    await expect(packArchive({ archivePath, domain: 'docs.example.com', version: 'v1', outDir: d })).rejects.toMatchObject({
      exitCode: 2,
      code: 'AIRLOCK_EXISTS',
      details: { subject: out },
    });
    expect(await readFile(out, 'utf8')).toBe('precious');
  });

  it('usage errors (exit 2): bad domain, bad label, missing or unreadable archive', async () => {
    const d = await fresh();
    const archivePath = join(d, 'a.tar');
    await writeFile(archivePath, siteTar());
    await expect(packArchive({ archivePath, domain: '../etc', outDir: d })).rejects.toMatchObject({ exitCode: 2, details: { subject: '--domain' } });
    await expect(packArchive({ archivePath, domain: 'd.example', version: '../x', outDir: d })).rejects.toMatchObject({
      exitCode: 2,
      details: { subject: '--version-label' },
    });
    await expect(packArchive({ archivePath: join(d, 'nope.tar'), domain: 'd.example', outDir: d })).rejects.toMatchObject({ exitCode: 2 });
    await expect(packArchive({ archivePath: d, domain: 'd.example', outDir: d })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/is a folder; give the export archive itself/),
    });
    if (process.getuid?.() !== 0) {
      await chmod(archivePath, 0);
      await expect(packArchive({ archivePath, domain: 'd.example', version: 'v1', outDir: d })).rejects.toMatchObject({
        exitCode: 2,
        message: expect.stringMatching(/cannot be read \(permission denied\)/),
      });
    }
  });

  it('a package given as the archive: exit 4 AIRLOCK_ALREADY_A_PACKAGE', async () => {
    const d = await fresh();
    const { pkgPath } = await makePackage({ outDir: d });
    await expect(packArchive({ archivePath: pkgPath, domain: 'docs.example.com', version: 'v2', outDir: join(d, 'out') })).rejects.toMatchObject({
      exitCode: 4,
      code: 'AIRLOCK_ALREADY_A_PACKAGE',
    });
  });

  it('not an archive at all: exit 4 naming it, nothing written', async () => {
    const d = await fresh();
    const archivePath = join(d, 'page.html');
    await writeFile(archivePath, '<!doctype html><title>403 Forbidden</title>');
    await expect(packArchive({ archivePath, domain: 'docs.example.com', version: 'v1', outDir: join(d, 'out') })).rejects.toMatchObject({ exitCode: 4 });
    expect(await readdir(d)).toEqual(['page.html']);
  });
});

describe('writePackage exclusive: an output that appears while the package is written is never replaced', () => {
  it('AIRLOCK_EXISTS, the other file kept, no temp file left', async () => {
    const d = await fresh();
    const { manifest, archivePath } = await makePackage({ outDir: d, name: 'first.airlock' });
    const out = join(d, 'raced.airlock');
    await writeFile(out, 'written by someone else meanwhile');
    await expect(writePackage({ outPath: out, manifest, archivePath, exclusive: true })).rejects.toMatchObject({ code: 'AIRLOCK_EXISTS', exitCode: 2 });
    expect(await readFile(out, 'utf8')).toBe('written by someone else meanwhile');
    expect((await readdir(d)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('a raw export archive given where a package is expected (the most common mistake)', () => {
  it.each([
    ['tar.gz', () => tgz(siteFiles('site/'))],
    ['zip', () => siteZip()],
    ['tar', () => siteTar()],
    ['tar', () => siteTar('site/', [{ name: 'site/', type: '5' }])],
  ] as const)('%s: exit 4 AIRLOCK_NOT_A_PACKAGE saying what it is and how to pack it', async (format, build) => {
    const d = await fresh();
    const p = join(d, `export.${format}`);
    await writeFile(p, build());
    const want = expect.objectContaining({
      exitCode: 4,
      code: 'AIRLOCK_NOT_A_PACKAGE',
      details: expect.objectContaining({ subject: p, format }),
      message: expect.stringContaining(`is an export archive (${format}), not an .airlock package; turn it into one with \`airlock pack ${p} --domain D\``),
    });
    await expect(readPackage(p)).rejects.toThrow(want);
    await expect(verifyPackage(p, { trust: [], allowUnsigned: true })).rejects.toThrow(want);
  });
});
