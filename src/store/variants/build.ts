import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir } from '../../util/fsx.js';
import { readStoredManifest } from '../meta.js';
import { removeOwnTemp } from '../own-temp.js';
import { versionDir, versionPaths } from '../paths.js';
import type { Manifest } from '../../package/index.js';
import { acquireLease } from '../leases.js';
import { defaultPoolSize, runVariantJobs } from './pool.js';
import { readVariantsIndex, writeVariantsIndex, type VariantEntry } from './index-file.js';
import { access } from 'node:fs/promises';
import { selectForVariants } from './select.js';

export interface VariantsOptions {
  poolSize?: number;
  /** Brotli quality (default BR_QUALITY) and gzip level (default GZIP_LEVEL). */
  brQuality?: number;
  gzipLevel?: number;
  /** Files never served as stored (serve sends its transformed HTML, compressed on its own): no variants. */
  exclude?: (path: string) => boolean;
  onProgress?: (done: number, total: number) => void;
  /** Each variant set as soon as its files are durable (a server attaches it at once). */
  onVariant?: (sha256: string, sizes: VariantEntry) => void;
  signal?: AbortSignal;
  /**
   * The caller already holds this process's lease on the version (a server serving it): leases
   * are per process, so taking another here would replace the server's and drop it after.
   */
  leased?: boolean;
}

/**
 * Levels measured by bench/compress-levels.ts on real-export-shaped assets: brotli 5 and gzip 6
 * keep well over 90 % of the best levels' ratio at several times their speed (docs/benchmarks.md).
 */
export const BR_QUALITY = 5;
export const GZIP_LEVEL = 6;
export interface VariantsReport {
  candidates: number;
  br: number;
  gz: number;
  failed: string[];
}

/**
 * Precompress a committed version's text files into variants/<sha256>.br|.gz, then publish
 * variants/index.json atomically. Each variant file is fsynced before its rename and reported
 * through onVariant only then, so a server may use it at once; a crash costs the rebuild of what
 * is not in the index. Holds a lease so prune leaves the version alone meanwhile (unless the
 * caller holds one). Resumable: digests already in the index are skipped.
 */
export async function buildVariants(store: string, label: string, o: VariantsOptions = {}): Promise<VariantsReport> {
  const dir = versionDir(store, label);
  const p = versionPaths(dir);
  const lease = o.leased ? { release: async () => {} } : await acquireLease(store, label);
  try {
    const manifest: Manifest = await readStoredManifest(dir);
    const index = await readVariantsIndex(p.variantsIndex);
    const todo = selectForVariants(manifest.files.filter((f) => !o.exclude?.(f.path))).filter((f) => !index.has(f.sha256));
    const report: VariantsReport = { candidates: todo.length, br: 0, gz: 0, failed: [] };
    // Nothing left and the index published: write nothing (a read-only store stays untouched).
    if (
      todo.length === 0 &&
      (await access(p.variantsIndex).then(
        () => true,
        () => false,
      ))
    )
      return report;
    await mkdir(p.variants, { recursive: true });
    let done = 0;
    const jobs = todo.map((f) => ({
      src: join(p.site, ...f.path.split('/')),
      sha256: f.sha256,
      destBase: join(p.variants, f.sha256),
      brQuality: o.brQuality ?? BR_QUALITY,
      gzipLevel: o.gzipLevel ?? GZIP_LEVEL,
    }));
    const byBase = new Map(todo.map((f, i) => [jobs[i]!.destBase, f]));
    await runVariantJobs(
      jobs,
      o.poolSize ?? defaultPoolSize(),
      (job, r) => {
        const f = byBase.get(job.destBase)!;
        if (r.error) report.failed.push(f.path);
        else if (r.br || r.gz) {
          const sizes = { ...(r.br ? { br: r.br } : {}), ...(r.gz ? { gz: r.gz } : {}) };
          index.set(f.sha256, sizes);
          o.onVariant?.(f.sha256, sizes);
        }
        if (r.br) report.br++;
        if (r.gz) report.gz++;
        o.onProgress?.(++done, todo.length);
      },
      o.signal,
    ).catch(async (err: unknown) => {
      await removeOwnTemp(p.variants); // the workers are stopped: their half-written files go
      throw err;
    });
    await fsyncDir(p.variants);
    await writeVariantsIndex(p.variantsIndex, index);
    o.signal?.throwIfAborted();
    return report;
  } finally {
    await lease.release();
  }
}
