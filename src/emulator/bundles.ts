import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { create as tarCreate } from 'tar';
import yazl from 'yazl';
import { listFiles, type SiteConfig } from './sites.js';

/** An object in the emulated object storage: a file on disk plus what S3 would say about it. */
export interface StoredObject {
  file: string;
  name: string;
  contentType: string;
  size: number;
  md5: string;
  lastModified: Date;
}

export async function describeFile(file: string, name: string): Promise<StoredObject> {
  const hash = createHash('md5');
  await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), hash);
  const st = await stat(file);
  const contentType = name.endsWith('.zip') ? 'application/zip' : name.endsWith('.tar') ? 'application/x-tar' : 'application/gzip';
  return { file, name, contentType, size: st.size, md5: hash.digest('hex'), lastModified: st.mtime };
}

/** The archive name a served file gets, from its extension (like the live service's two names). */
export function archiveName(path: string): string {
  if (/\.zip$/i.test(path)) return 'export.zip';
  if (/\.tar$/i.test(path)) return 'bundle.tar';
  return 'bundle.tar.gz';
}

/**
 * Build the export archive of a fixture site into `outDir`: tar.gz with a single wrapping folder
 * `site/` (as real exports have), or a flat zip. Portable headers (no uid/gid/user names).
 */
export async function buildArchive(site: SiteConfig, outDir: string, domain: string): Promise<StoredObject> {
  const files = await listFiles(site.dir);
  if (site.format === 'zip') {
    const out = join(outDir, `${domain}.zip`);
    const zip = new yazl.ZipFile();
    for (const f of files) zip.addFile(join(site.dir, f), f, { mtime: new Date('2024-01-01T00:00:00Z') });
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(out));
    return describeFile(out, 'export.zip');
  }
  const out = join(outDir, `${domain}.tar.gz`);
  await tarCreate({ gzip: true, cwd: site.dir, prefix: 'site', portable: true, file: out, mtime: new Date('2024-01-01T00:00:00Z') }, files);
  return describeFile(out, 'bundle.tar.gz');
}

/** Builds each domain's archive once; concurrent callers share the same promise. */
export class BundleCache {
  private readonly built = new Map<string, Promise<StoredObject>>();
  constructor(private readonly outDir: string) {}

  get(domain: string, site: SiteConfig): Promise<StoredObject> {
    let p = this.built.get(domain);
    if (!p) {
      p = buildArchive(site, this.outDir, domain);
      p.catch(() => this.built.delete(domain));
      this.built.set(domain, p);
    }
    return p;
  }

  /** A given file, re-described when it changes (tests rewrite evil archives in place). */
  async served(path: string): Promise<StoredObject> {
    const st = await stat(path);
    const k = `file:${path}:${st.size}:${st.mtimeMs}`;
    let p = this.built.get(k);
    if (!p) {
      p = describeFile(path, archiveName(path));
      p.catch(() => this.built.delete(k));
      this.built.set(k, p);
    }
    return p;
  }
}
