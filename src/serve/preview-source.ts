import { rm } from 'node:fs/promises';
import { makeTempFolder } from '../util/fsx.js';
import { join } from 'node:path';
import { extractArchive } from '../archive/scan.js';
import { probeCaseFolding } from '../archive/case-probe.js';
import { compareToManifest } from '../package/verify.js';
import { readPackage } from '../package/reader.js';
import type { SiteInput } from './source.js';

/**
 * `airlock preview`: extract an export archive or the archive inside a `.airlock` package into a
 * fresh temp folder (src/archive enforces every archive-safety rule; nothing lands outside it),
 * and describe it as a site to serve (its HTML cache goes in `dir` too). The store is never
 * touched. The caller removes `dir`.
 */
export interface PreviewSite {
  dir: string;
  site: SiteInput;
}

export async function extractForPreview(file: string): Promise<PreviewSite> {
  const dir = await makeTempFolder('airlock-preview-');
  try {
    const siteDir = join(dir, 'site');
    // Case pairs (rules/A001 beside rules/a001) are refused only if the temp folder folds case.
    const foldsCase = await probeCaseFolding(dir);
    if (file.endsWith('.airlock')) {
      const pkg = await readPackage(file);
      const scan = await extractArchive({ path: file, offset: pkg.archive.offset, length: pkg.archive.size }, siteDir, { foldsCase });
      compareToManifest(pkg.manifest, scan); // a tampered package is refused, not previewed
      const m = pkg.manifest;
      return { dir, site: { dir: siteDir, files: scan.files, label: m.version, domain: m.domain, pageCount: m.pageCount, htmlCacheDir: join(dir, 'html') } };
    }
    const scan = await extractArchive({ path: file }, siteDir, { foldsCase });
    return { dir, site: { dir: siteDir, files: scan.files, label: 'preview', htmlCacheDir: join(dir, 'html') } };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
