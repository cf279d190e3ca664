import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { WORKER_SOURCE, type VariantJob, type VariantResult } from './worker-source.js';

export const defaultPoolSize = (): number => Math.max(1, Math.min(2, availableParallelism()));

/**
 * Run jobs on `size` worker threads (compression is CPU-bound: threads keep the main loop free
 * and use both cores). Results come back in completion order through `onResult`.
 */
export async function runPool(jobs: Omit<VariantJob, 'id'>[], size: number, onResult: (job: Omit<VariantJob, 'id'>, r: VariantResult) => void, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  let next = 0;
  const workers = Array.from({ length: Math.min(size, jobs.length) }, () => new Worker(WORKER_SOURCE, { eval: true }));
  let stop: (() => void) | undefined;
  // Aborted: reject at once; the finally below terminates the workers before returning.
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(signal!.reason);
    signal?.addEventListener('abort', stop, { once: true });
  });
  aborted.catch(() => {});
  try {
    await Promise.race([aborted, Promise.all(workers.map((w) => new Promise<void>((resolve, reject) => {
      const feed = () => {
        if (next >= jobs.length || signal?.aborted) return resolve();
        const id = next++;
        w.postMessage({ ...jobs[id], id });
      };
      w.on('message', (r: VariantResult) => {
        const job = jobs[r.id];
        if (job) onResult(job, r);
        feed();
      });
      w.on('error', reject);
      w.on('exit', (code) => ((next < jobs.length && !signal?.aborted) || code !== 0 ? reject(new Error(`variant worker exited with code ${code}`)) : undefined));
      feed();
    })))]);
  } finally {
    if (stop) signal?.removeEventListener('abort', stop);
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
