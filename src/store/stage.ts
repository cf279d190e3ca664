import { createReadStream, createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MalformedError } from '../errors.js';
import { extractArchive, type ArchiveLimits } from '../archive/index.js';
import { readPackage, compareToManifest, type PackageLayout } from '../package/index.js';
import { fsyncDir } from '../util/fsx.js';
import { fsyncFile } from './fsync-tree.js';
import { versionPaths } from './paths.js';
import type { VersionMeta } from './meta.js';
import type { ProgressEvent } from './progress.js';

/** Copy the package byte for byte, hashing it on the way (one read of the source). */
async function copyHashed(src: string, dest: string, total: number, onProgress?: (e: ProgressEvent) => void): Promise<string> {
  const hash = createHash('sha256');
  let bytes = 0;
  let reported = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      bytes += chunk.length;
      if (bytes - reported >= 64 * 1024 * 1024 || bytes === total) {
        reported = bytes;
        onProgress?.({ phase: 'copy', bytes, total });
      }
      cb(null, chunk);
    },
  });
  await pipeline(createReadStream(src, { highWaterMark: 1 << 20 }), tap, createWriteStream(dest, { flags: 'wx' }));
  await fsyncFile(dest);
  return hash.digest('hex');
}

export interface StageInput { pkg: string; pkgSize: number; layout: PackageLayout; signer: string | null; limits?: Partial<ArchiveLimits> }

/**
 * Build a complete version inside `dir` (a fresh staging folder): the package copy, the site
 * extracted from THAT copy and checked against the manifest, airlock.json and version.json, all
 * fsynced. Extracting from the copy (and re-reading its head) means the bytes verified are the
 * bytes kept, even if the source file is changed while we run (a TOCTOU on removable media).
 */
export async function stageVersion(dir: string, input: StageInput, onProgress?: (e: ProgressEvent) => void): Promise<VersionMeta> {
  const p = versionPaths(dir);
  const packageSha256 = await copyHashed(input.pkg, p.pkg, input.pkgSize, onProgress);
  const staged = await readPackage(p.pkg);
  if (!staged.manifestBytes.equals(input.layout.manifestBytes) || !sameBytes(staged.signature, input.layout.signature)) {
    throw new MalformedError('AIRLOCK_PACKAGE_CHANGED', `package ${input.pkg} changed while it was being imported`, { subject: input.pkg });
  }
  const { manifest } = staged;
  onProgress?.({ phase: 'extract', dir: p.site, total: staged.archive.size });
  const scan = await extractArchive({ path: p.pkg, offset: staged.archive.offset, length: staged.archive.size }, p.site, { limits: input.limits, format: manifest.archive.format });
  compareToManifest(manifest, scan);
  const meta: VersionMeta = {
    label: manifest.version,
    domain: manifest.domain,
    importedAt: new Date().toISOString(),
    packageSha256,
    archive: { name: staged.archive.name, format: scan.format, offset: staged.archive.offset, size: staged.archive.size, sha256: scan.archiveSha256 },
    signer: input.signer,
    pageCount: manifest.pageCount,
    fileCount: scan.files.length,
    totalBytes: scan.files.reduce((n, f) => n + f.size, 0),
  };
  await writeFile(p.manifest, staged.manifestBytes, { flag: 'wx' });
  await fsyncFile(p.manifest);
  await writeFile(p.meta, JSON.stringify(meta, null, 2) + '\n', { flag: 'wx' });
  await fsyncFile(p.meta);
  // extractArchive fsyncs every file and folder under site/; the version folder's own entries remain.
  await fsyncDir(p.site);
  await fsyncDir(dir);
  onProgress?.({ phase: 'extracted', files: meta.fileCount, bytes: meta.totalBytes });
  return meta;
}

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}
