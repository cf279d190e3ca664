import { parentPort } from 'node:worker_threads';
import { join } from 'node:path';
import { loadOrBuild, readBounded, type BuildInput, type BuildReport } from './build.js';
import { extractPage } from './extract.js';
import type { SearchIndex, QueryOptions, SearchHit } from './engine.js';
import { PageTexts } from './page-texts.js';

/**
 * A search worker of the pool (pool.ts): holds the indexes the pool gave it, each under its key,
 * loads or builds them on `load`, lets them go on `drop`, and answers queries. The indexes live
 * here, off the server's event loop and heap. `gen` tells a load from a later one of the same key:
 * a load that finishes after its key was dropped or loaded again is thrown away.
 */
export type PoolRequest =
  | { type: 'load'; key: string; gen: number; input: BuildInput }
  | { type: 'drop'; key: string }
  | { type: 'query'; id: number; key: string; query: string; options: QueryOptions };
export type WorkerMessage =
  | { type: 'ready'; key: string; gen: number; report: BuildReport }
  | { type: 'failed'; key: string; gen: number; error: string }
  | { type: 'result'; id: number; hits?: SearchHit[]; error?: string };

interface Held {
  gen: number;
  siteDir: string;
  /** Each page's digest (the manifest's): a page read for a hit's text is checked against it. */
  digests: Map<string, string>;
  index: SearchIndex | null;
}

const port = parentPort!;
const held = new Map<string, Held>();
const send = (m: WorkerMessage) => port.postMessage(m);
/** Characters of extracted page text kept for the next queries, for all the indexes this worker holds (about 2 bytes each at most). */
const texts = new PageTexts(8_000_000);
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

port.on('message', (m: PoolRequest) => {
  if (m.type === 'drop') return void (held.delete(m.key), texts.drop(m.key));
  if (m.type === 'load') {
    texts.drop(m.key);
    const h: Held = { gen: m.gen, siteDir: m.input.siteDir, digests: new Map(m.input.pages.map((p) => [p.path, p.sha256])), index: null };
    held.set(m.key, h);
    loadOrBuild(m.input).then(
      (r) => {
        if (held.get(m.key) !== h) return; // dropped or loaded again meanwhile
        h.index = r.index;
        send({ type: 'ready', key: m.key, gen: m.gen, report: r.report });
      },
      (err: unknown) => {
        if (held.get(m.key) === h) held.delete(m.key);
        send({ type: 'failed', key: m.key, gen: m.gen, error: message(err) });
      },
    );
    return;
  }
  const h = held.get(m.key);
  if (!h?.index) return void send({ type: 'result', id: m.id, error: 'not ready' });
  const text = (file: string) =>
    texts.get(m.key, file, async () => {
      const sha256 = h.digests.get(file);
      if (sha256 === undefined) throw new Error('not a page of this version');
      return extractPage(await readBounded(join(h.siteDir, file), sha256));
    });
  h.index.query(m.query, text, m.options).then(
    (hits) => send({ type: 'result', id: m.id, hits }),
    (err: unknown) => send({ type: 'result', id: m.id, error: message(err) }),
  );
});
