import { cp, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { create as tarCreate } from 'tar';
import type { FileRecord } from '../src/archive/index.js';

/**
 * A store holding one generated site (fixtures/generate.ts: `pages` pages of about 15 KB), or a
 * copy of the site in `from` (a real one), packed, and imported as `bench-1` (active) of
 * docs.example.com, as an operator's import would: what the serve benchmarks start from. Under
 * `work`: the export, its archive, the package and the store.
 */
export async function generatedStore(work: string, pages: number, from?: string): Promise<{ store: string; siteDir: string; files: FileRecord[] }> {
  const { generateSite } = await import('../fixtures/generate.js');
  const { scanArchive } = await import('../src/archive/index.js');
  const { writePackage } = await import('../src/package/index.js');
  const { importPackage } = await import('../src/store/index.js');
  const exportDir = join(work, 'export');
  const siteDir = join(exportDir, 'site');
  await mkdir(siteDir, { recursive: true });
  if (from === undefined) await generateSite(siteDir, { pages, bytesPerPage: 15_000 });
  else {
    await cp(from, siteDir, { recursive: true });
    pages = (await readdir(siteDir, { recursive: true })).filter((f) => f.endsWith('.html')).length;
  }
  const archive = join(work, 'bundle.tar.gz');
  await tarCreate({ gzip: true, file: archive, cwd: exportDir, portable: true }, ['site']);
  const scan = await scanArchive({ path: archive });
  const pkg = join(work, 'bench.airlock');
  await writePackage({
    outPath: pkg,
    archivePath: archive,
    manifest: {
      format: 'airlock-package/1',
      domain: 'docs.example.com',
      version: 'bench-1',
      jobId: null,
      createdAt: new Date().toISOString(),
      pageCount: pages,
      archive: { name: 'bundle.tar.gz', format: 'tar.gz', size: scan.archiveSize, sha256: scan.archiveSha256 },
      files: scan.files,
    },
  });
  const store = join(work, 'store');
  await importPackage(pkg, { store, trust: [], allowUnsigned: true, activate: true });
  return { store, siteDir, files: scan.files };
}
