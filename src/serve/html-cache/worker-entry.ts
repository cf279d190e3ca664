import { parentPort, workerData } from 'node:worker_threads';
import { transformHtmlDetailed, type TransformContext } from '../../features/index.js';
import { buildPage, type PageJob } from './page.js';

/**
 * Runs in a worker thread (see pool.ts): builds pages with src/features' transform, whose options
 * come with a job when they change (structured clone: RegExps survive). One message in, one message out.
 */
export interface WorkerReply {
  id: number;
  page?: import('./cached.js').CachedPage;
  error?: string;
}

// The transform options: sent with a job whenever they differ from the last job's (one pool builds
// the pages of every version a server prepares, each with its own options).
let context: TransformContext | null = (workerData as { data: TransformContext | null }).data; // util/worker.ts spawnWorker
const port = parentPort!;
port.on('message', (msg: { id: number; job: PageJob; context?: TransformContext }) => {
  if (msg.context !== undefined) context = msg.context;
  const options = context;
  if (options === null) return port.postMessage({ id: msg.id, error: 'no transform options' } satisfies WorkerReply);
  buildPage(
    msg.job,
    async (html, path) => {
      const r = await transformHtmlDetailed(html, options, path);
      return { html: r.html, scriptHashes: r.scriptHashes, styleHashes: r.styleHashes };
    },
    { blocking: true },
  ).then(
    (page) => port.postMessage({ id: msg.id, page } satisfies WorkerReply),
    (err: unknown) => port.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) } satisfies WorkerReply),
  );
});
port.postMessage({ id: -1 }); // ready: the transform's modules (and its wasm) are loaded
