import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TransformContext } from '../../features/index.js';
import type { CachedPage } from './index-file.js';
import type { PageJob } from './page.js';
import type { WorkerReply } from './worker-entry.js';

/**
 * Where the worker's code lives. Compiled (dist): worker-entry.js, loaded directly. From source
 * (vitest, tsx): Node 20 workers do not inherit a TS loader, so a tiny eval'd bootstrap loads the
 * .ts entry through tsx's scoped `tsImport` (tsx is a dev dependency; dist never needs it).
 */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const ENTRY = new URL(`./worker-entry.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url);
const BOOTSTRAP = String.raw`
const { workerData } = require('node:worker_threads');
import(workerData.tsxApi).then((tsx) => tsx.tsImport(workerData.entry, workerData.entry))
  .catch((err) => { setImmediate(() => { throw err; }); });
`;

/** File URL of tsx's ESM API (its `exports` map, "import" condition): the dev-only loader. */
function tsxApiUrl(): string {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve('tsx/package.json');
  const pkg = require(pkgPath) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(join(dirname(pkgPath), pkg.exports['./esm/api']!.import.default)).href;
}

function spawn(context: TransformContext): Worker {
  if (!FROM_SOURCE) return new Worker(ENTRY, { workerData: { context } });
  return new Worker(BOOTSTRAP, { eval: true, workerData: { context, entry: ENTRY.href, tsxApi: tsxApiUrl() } });
}

export const defaultPoolSize = (): number => Math.max(1, availableParallelism());

/**
 * Build pages on `size` worker threads (the transform is CPU-bound and single-threaded in wasm:
 * threads use every core and leave the serving thread free for requests of the old version).
 * Fails on the first page that fails, naming it; all workers are ended either way.
 */
export async function runPagePool(jobs: PageJob[], context: TransformContext, size: number, onPage: (job: PageJob, page: CachedPage) => void): Promise<void> {
  if (jobs.length === 0) return;
  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(size, jobs.length)) }, () => spawn(context));
  try {
    await Promise.all(workers.map((w) => new Promise<void>((resolve, reject) => {
      let busy = -1;
      const feed = () => {
        if (next >= jobs.length) return resolve();
        busy = next++;
        w.postMessage({ id: busy, job: jobs[busy] });
      };
      w.on('message', (r: WorkerReply) => {
        if (r.id === -1) return feed();
        const job = jobs[r.id]!;
        if (r.error !== undefined || !r.page) return reject(new Error(`transforming ${job.path}: ${r.error ?? 'no result'}`));
        onPage(job, r.page);
        feed();
      });
      w.on('error', (err) => reject(new Error(`HTML transform worker failed${busy >= 0 ? ` on ${jobs[busy]!.path}` : ' to start'}: ${err.message}`)));
      w.on('exit', (code) => reject(new Error(`HTML transform worker exited with code ${code}`)));
    })));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
