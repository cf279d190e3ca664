import { createHash, type KeyObject } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import * as tar from 'tar';
import yazl from 'yazl';
import type { ArchiveFormat, FileRecord } from '../../src/archive/types.js';
import { loadPrivateKey, writePackage, type Manifest } from '../../src/package/index.js';

/** Test helper (for every module's tests): an export archive and a `.airlock` package built from a site folder. */
export const FIXTURE_SITE = fileURLToPath(new URL('../../fixtures/site/', import.meta.url));
const FIXED_TIME = new Date('2025-01-15T12:00:00Z');

export interface MakePackageOptions {
  siteDir?: string;
  format?: ArchiveFormat;
  version?: string;
  domain?: string;
  /** A KeyObject or the path of a PKCS#8 PEM key; unsigned when absent. */
  signKey?: KeyObject | string;
  outDir: string;
  /** Put every entry under one wrapping folder `site/` (the manifest paths stay unwrapped). */
  wrap?: boolean;
  /** Change the manifest before it is written (and signed), to build packages that must fail. */
  mutate?: (m: Manifest) => void;
  /** Package file name (default `<domain>-<version>.airlock`). */
  name?: string;
}

export async function walkSite(dir: string, base = dir): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walkSite(p, base)));
    else if (e.isFile()) out.push(relative(base, p).split('\\').join('/'));
  }
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Build the export archive `bundle.<ext>` (deterministic: fixed mtimes, sorted entries). */
export async function makeArchive(siteDir: string, format: ArchiveFormat, outPath: string, wrap = false): Promise<string[]> {
  const files = await walkSite(siteDir);
  if (format === 'zip') {
    const zip = new yazl.ZipFile();
    for (const f of files) zip.addFile(join(siteDir, f), (wrap ? 'site/' : '') + f, { mtime: FIXED_TIME, mode: 0o100644 });
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(outPath));
  } else {
    await tar.create(
      { gzip: format === 'tar.gz', file: outPath, cwd: siteDir, portable: true, mtime: FIXED_TIME, prefix: wrap ? 'site' : undefined, noDirRecurse: true },
      files,
    );
  }
  return files;
}

const EXT: Record<ArchiveFormat, string> = { 'tar.gz': 'tar.gz', tar: 'tar', zip: 'zip' };

export async function makePackage(o: MakePackageOptions): Promise<{ pkgPath: string; manifest: Manifest; archivePath: string }> {
  const siteDir = o.siteDir ?? FIXTURE_SITE;
  const format = o.format ?? 'tar.gz';
  const version = o.version ?? 'v1';
  const domain = o.domain ?? 'docs.example.com';
  await mkdir(o.outDir, { recursive: true });
  const archiveName = `bundle.${EXT[format]}`;
  const archivePath = join(o.outDir, `${version}-${archiveName}`);
  const paths = await makeArchive(siteDir, format, archivePath, o.wrap);
  const files: FileRecord[] = [];
  for (const p of paths) {
    const data = await readFile(join(siteDir, p));
    files.push({ path: p, size: data.length, sha256: sha256(data) });
  }
  const manifest: Manifest = {
    format: 'airlock-package/1',
    domain,
    version,
    jobId: `job_${version}`,
    createdAt: FIXED_TIME.toISOString(),
    pageCount: paths.filter((p) => p.endsWith('.html') && p !== '404.html').length,
    archive: { name: archiveName, format, size: (await stat(archivePath)).size, sha256: await fileSha256(archivePath) },
    files,
  };
  o.mutate?.(manifest);
  const signKey = typeof o.signKey === 'string' ? await loadPrivateKey(o.signKey) : o.signKey;
  const pkgPath = join(o.outDir, o.name ?? `${domain}-${version}.airlock`);
  await writePackage({ outPath: pkgPath, manifest, archivePath, signKey });
  return { pkgPath, manifest, archivePath };
}
