import type { Worker } from 'node:worker_threads';
import { siblingEntry, spawnWorker } from '../../util/worker.js';
import type { TransformContext } from '../../features/index.js';
import type { CachedPage } from './cached.js';
import type { PageJob } from './page.js';
import type { PageSlot } from './pool.js';
import type { WorkerReply } from './worker-entry.js';

const ENTRY = siblingEntry(import.meta.url, 'worker-entry');
const spawn = (): Worker => spawnWorker(ENTRY, null);

/** A worker thread building pages with src/features' transform, for the options each job's queue gives. */
export function workerSlot(): PageSlot {
  const w = spawn();
  let sent: TransformContext | undefined; // the options this worker holds (sent again only when they change)
  let ready = false;
  let waiting: { id: number; job: PageJob; resolve: (p: CachedPage) => void; reject: (e: Error) => void } | null = null;
  let failed: Error | null = null;
  let started: () => void = () => {};
  const up = new Promise<void>((r) => (started = r));
  let nextId = 0;
  const fail = (err: Error) => {
    failed = err;
    started();
    const wt = waiting;
    waiting = null;
    wt?.reject(new Error(`transforming ${wt.job.path}: ${err.message}`));
  };
  w.on('message', (r: WorkerReply) => {
    if (r.id === -1) {
      ready = true;
      return started();
    }
    const wt = waiting;
    if (wt === null || wt.id !== r.id) return;
    waiting = null;
    if (r.error !== undefined || !r.page) wt.reject(new Error(`transforming ${wt.job.path}: ${r.error ?? 'no result'}`));
    else wt.resolve(r.page);
  });
  w.on('error', (err) => fail(new Error(`HTML transform worker failed${ready ? '' : ' to start'}: ${err.message}`)));
  w.on('exit', (code) => fail(new Error(`HTML transform worker exited with code ${code}`)));
  return {
    run: async (job, context) => {
      await up;
      if (failed) throw new Error(`transforming ${job.path}: ${failed.message}`);
      if (context === undefined) throw new Error(`transforming ${job.path}: no transform options`);
      return new Promise<CachedPage>((resolve, reject) => {
        waiting = { id: nextId++, job, resolve, reject };
        w.postMessage({ id: waiting.id, job, ...(context === sent ? {} : { context }) });
        sent = context;
      });
    },
    end: async () => {
      w.removeAllListeners('exit');
      await w.terminate();
    },
    dead: () => failed !== null,
  };
}
