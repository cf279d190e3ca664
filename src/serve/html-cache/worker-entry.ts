import { parentPort, workerData } from 'node:worker_threads';
import { transformHtmlDetailed, type TransformContext } from '../../features/index.js';
import { buildPage, type PageJob } from './page.js';

/**
 * Runs in a worker thread (see pool.ts): builds pages with src/features' transform, whose options
 * came as workerData (structured clone: RegExps survive). One message in, one message out.
 */
export interface WorkerReply {
  id: number;
  page?: import('./cached.js').CachedPage;
  error?: string;
}

const context = (workerData as { data: TransformContext }).data; // util/worker.ts spawnWorker
const port = parentPort!;
port.on('message', (msg: { id: number; job: PageJob }) => {
  buildPage(
    msg.job,
    async (html, path) => {
      const r = await transformHtmlDetailed(html, context, path);
      return { html: r.html, scriptHashes: r.scriptHashes, styleHashes: r.styleHashes };
    },
    { blocking: true },
  ).then(
    (page) => port.postMessage({ id: msg.id, page } satisfies WorkerReply),
    (err: unknown) => port.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) } satisfies WorkerReply),
  );
});
port.postMessage({ id: -1 }); // ready: the transform's modules (and its wasm) are loaded
