import { parentPort, workerData } from 'node:worker_threads';
import { join } from 'node:path';
import { loadOrBuild, readBounded, type BuildInput } from './build.js';
import { extractPage } from './extract.js';
import type { SearchIndex, QueryOptions, SearchHit } from './engine.js';

/**
 * The search worker of one version (service.ts): loads or builds the index, reports `ready`, then
 * answers queries. The index lives here, off the server's event loop and heap.
 */
export type WorkerMessage =
  | { type: 'ready'; report: import('./build.js').BuildReport }
  | { type: 'failed'; error: string }
  | { type: 'result'; id: number; hits?: SearchHit[]; error?: string };
export interface QueryMessage {
  id: number;
  query: string;
  options: QueryOptions;
}

const input = (workerData as { data: BuildInput }).data;
const port = parentPort!;
let index: SearchIndex | null = null;
const text = async (file: string) => extractPage(await readBounded(join(input.siteDir, file)));
port.on('message', (m: QueryMessage) => {
  if (index === null) return void port.postMessage({ type: 'result', id: m.id, error: 'not ready' } satisfies WorkerMessage);
  index.query(m.query, text, m.options).then(
    (hits) => port.postMessage({ type: 'result', id: m.id, hits } satisfies WorkerMessage),
    (err: unknown) => port.postMessage({ type: 'result', id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies WorkerMessage),
  );
});
loadOrBuild(input).then(
  (r) => {
    index = r.index;
    port.postMessage({ type: 'ready', report: r.report } satisfies WorkerMessage);
  },
  (err: unknown) => port.postMessage({ type: 'failed', error: err instanceof Error ? err.message : String(err) } satisfies WorkerMessage),
);
