import { parentPort } from 'node:worker_threads';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { brotliCompressSync, constants as Z, gzipSync } from 'node:zlib';
import { writeDurably } from '../../util/fsx.js';

/**
 * Runs in a compression worker thread (see pool.ts, started through util/worker spawnWorker). One
 * job: check `src` against its digest, compress it with brotli and gzip; write each variant only if it is smaller, durably
 * (util/fsx writeDurably; the builder syncs the folder once before publishing the index).
 */
export interface VariantJob {
  id: number;
  src: string;
  /** The manifest's digest of `src`: other bytes (a file changed in the store, or read through a link) are never compressed. */
  sha256: string;
  destBase: string;
  brQuality: number;
  gzipLevel: number;
}
export interface VariantResult {
  id: number;
  br?: number;
  gz?: number;
  error?: string;
}

const write = (path: string, data: Buffer) => writeDurably(path, (fh) => fh.writeFile(data), { syncFolder: false });

async function run(job: VariantJob): Promise<VariantResult> {
  const data = await readFile(job.src);
  if (createHash('sha256').update(data).digest('hex') !== job.sha256) return { id: job.id, error: `${job.src} does not match the package's digest` };
  const out: VariantResult = { id: job.id };
  const br = brotliCompressSync(data, {
    params: {
      [Z.BROTLI_PARAM_QUALITY]: job.brQuality,
      [Z.BROTLI_PARAM_SIZE_HINT]: data.length,
      [Z.BROTLI_PARAM_MODE]: Z.BROTLI_MODE_TEXT,
    },
  });
  if (br.length < data.length) {
    await write(`${job.destBase}.br`, br);
    out.br = br.length;
  }
  const gz = gzipSync(data, { level: job.gzipLevel });
  if (gz.length < data.length) {
    await write(`${job.destBase}.gz`, gz);
    out.gz = gz.length;
  }
  return out;
}

const port = parentPort!;
port.on('message', (job: VariantJob) => {
  run(job).then(
    (r) => port.postMessage(r),
    (err: unknown) => port.postMessage({ id: job.id, error: err instanceof Error ? err.message : String(err) } satisfies VariantResult),
  );
});
port.postMessage({ id: -1 } satisfies VariantResult); // ready: its modules are loaded
