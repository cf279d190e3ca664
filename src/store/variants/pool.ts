import { availableParallelism } from 'node:os';
import { JobPool } from '../../util/pool.js';
import { siblingEntry, spawnWorker } from '../../util/worker.js';
import type { VariantJob, VariantResult } from './worker-entry.js';

const ENTRY = siblingEntry(import.meta.url, 'worker-entry');

export const defaultPoolSize = (): number => Math.max(1, Math.min(2, availableParallelism()));

/** One compression worker thread: one job at a time; an error or an exit fails the job it holds and every later one. */
function variantWorker() {
  const w = spawnWorker(ENTRY, null);
  let started: () => void = () => {};
  const up = new Promise<void>((r) => (started = r));
  let pending: { id: number; resolve: (r: VariantResult) => void; reject: (e: unknown) => void } | undefined;
  let failed: { err: unknown } | undefined;
  const fail = (err: unknown) => {
    failed ??= { err };
    started();
    const p = pending;
    pending = undefined;
    p?.reject(err);
  };
  w.on('message', (r: VariantResult) => {
    if (r.id === -1) return started();
    if (pending?.id !== r.id) return;
    const p = pending;
    pending = undefined;
    p.resolve(r);
  });
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`variant worker exited with code ${code}`)));
  return {
    run: async (job: VariantJob): Promise<VariantResult> => {
      await up;
      if (failed) throw failed.err;
      return new Promise((resolve, reject) => {
        pending = { id: job.id, resolve, reject };
        w.postMessage(job);
      });
    },
    fail,
    end: async () => {
      w.removeAllListeners('exit');
      await w.terminate();
    },
  };
}

/**
 * Run jobs on `size` worker threads (compression is CPU-bound: threads keep the main loop free
 * and use both cores), scheduled by a JobPool in job order. Results come back in completion order
 * through `onResult`. A worker's failure or an abort fails the jobs still in flight at once (the
 * others' compressions are not waited for) and the workers are terminated before this returns.
 */
export async function runVariantJobs(
  jobs: Omit<VariantJob, 'id'>[],
  size: number,
  onResult: (job: Omit<VariantJob, 'id'>, r: VariantResult) => void,
  signal?: AbortSignal,
): Promise<void> {
  signal?.throwIfAborted();
  const workers = Array.from({ length: Math.min(size, jobs.length) }, variantWorker);
  const idle = [...workers];
  const pool = new JobPool(Math.max(1, workers.length), Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
  const failAll = (err: unknown) => {
    for (const w of workers) w.fail(err);
  };
  const stop = () => failAll(signal!.reason);
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for (const [id, job] of jobs.entries()) {
      await pool.submit(async () => {
        signal?.throwIfAborted();
        const w = idle.pop()!;
        try {
          onResult(job, await w.run({ ...job, id }));
        } catch (err) {
          failAll(err);
          throw err;
        } finally {
          idle.push(w);
        }
      }, 0);
    }
    await pool.drain();
  } finally {
    signal?.removeEventListener('abort', stop);
    await Promise.all(workers.map((w) => w.end()));
  }
}
