import type { Worker } from 'node:worker_threads';
import { siblingEntry, spawnWorker } from '../util/worker.js';
import type { SearchSlots } from './slots.js';
import { searchablePages, type BuildInput, type BuildReport } from './build.js';
import type { QueryOptions, SearchHit } from './engine.js';
import type { QueryMessage, WorkerMessage } from './worker-entry.js';

/**
 * Local search for the served versions: one worker thread per version loads its index
 * from the cache file or builds it, in the background, when the version is loaded (`use`) or
 * first asked (`query`). Pages are served meanwhile; a query answers `building` (the route says
 * 503 + Retry-After) until the index is there. When the served version changes, the previous
 * version's worker ends. A worker that fails or dies answers `failed` and is retried after
 * `retryMs`. The worker's heap is bounded (`maxHeapMb`): an absurd site fails its index, not the
 * server.
 */
export type SearchAnswer =
  { status: 'ready'; hits: SearchHit[] } | { status: 'building'; retryAfterSec: number } | { status: 'failed'; error: string; retryAfterSec: number };

/** What the search needs of a served version (serve's SearchSource is one). */
export interface SearchSource {
  label: string;
  siteDir: string;
  files: ReadonlyArray<{ path: string; sha256: string }>;
  /** Folder of the version's index cache file, or null to keep it in memory only. */
  searchCacheDir: string | null;
}

export interface LocalSearchOptions {
  log: (line: string) => void;
  queryTimeoutMs?: number;
  retryMs?: number;
  maxHeapMb?: number;
  /** Shared by a library's sites: how many indexes stay loaded at once (the least recently queried is let go). */
  slots?: SearchSlots;
}

interface Entry {
  version: string;
  worker: Worker | null;
  state: 'building' | 'ready' | 'failed';
  error: string;
  failedAt: number;
  pending: Map<number, (m: { hits?: SearchHit[]; error?: string }) => void>;
  started: number;
}

const ENTRY = siblingEntry(import.meta.url, 'worker-entry');

export class LocalSearch {
  private readonly entries = new Map<string, Entry>();
  private latest: string | null = null;
  private nextId = 1;
  private closed = false;

  constructor(private readonly o: LocalSearchOptions) {}

  /**
   * The server loaded this version (start, switch, repair): prepare its index once `after` (its
   * HTML, which readers wait for, takes the cores first), drop the others. `onDemand`: prepare it
   * at its first query instead (a library's many sites: a site nobody searches costs no worker).
   */
  use(src: SearchSource, after?: Promise<unknown>, onDemand = false): void {
    this.latest = src.label;
    for (const [v, e] of this.entries) if (v !== src.label) this.stop(e);
    if (this.entries.has(src.label) || onDemand) return;
    if (!after) {
      this.start(src);
      return;
    }
    const waiting: Entry = { version: src.label, worker: null, state: 'building', error: '', failedAt: 0, pending: new Map(), started: Date.now() };
    this.entries.set(src.label, waiting);
    void after
      .catch(() => {})
      .then(() => {
        if (this.closed || this.entries.get(src.label) !== waiting) return; // dropped or closed meanwhile
        this.entries.delete(src.label);
        this.start(src);
      });
  }

  async query(src: SearchSource, query: string, options: QueryOptions): Promise<SearchAnswer> {
    let e = this.entries.get(src.label);
    if (!e) {
      if (this.closed || (this.latest !== null && this.latest !== src.label)) return { status: 'building', retryAfterSec: 1 };
      e = this.start(src);
    }
    if (e.state === 'failed' && Date.now() - e.failedAt >= (this.o.retryMs ?? 30_000)) {
      this.stop(e);
      e = this.start(src);
    }
    const held = e;
    this.o.slots?.use(held, () => void this.stop(held));
    if (e.state === 'building') return { status: 'building', retryAfterSec: 2 };
    if (e.state === 'failed' || e.worker === null) return { status: 'failed', error: e.error, retryAfterSec: Math.ceil((this.o.retryMs ?? 30_000) / 1000) };
    const worker = e.worker;
    const id = this.nextId++;
    const entry = e;
    const reply = await new Promise<{ hits?: SearchHit[]; error?: string }>((resolve) => {
      const timer = setTimeout(() => {
        entry.pending.delete(id);
        resolve({ error: `no answer within ${this.o.queryTimeoutMs ?? 5000} ms` });
      }, this.o.queryTimeoutMs ?? 5000);
      entry.pending.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      worker.postMessage({ id, query, options } satisfies QueryMessage);
    });
    if (reply.hits) return { status: 'ready', hits: reply.hits };
    return { status: 'failed', error: reply.error ?? 'no answer', retryAfterSec: 1 };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.entries.values()].map((e) => this.stop(e)));
  }

  private start(src: SearchSource): Entry {
    const input: BuildInput = {
      siteDir: src.siteDir,
      pages: searchablePages(src.files).map((f) => ({ path: f.path, sha256: f.sha256 })),
      cacheDir: src.searchCacheDir,
    };
    const e: Entry = { version: src.label, worker: null, state: 'building', error: '', failedAt: 0, pending: new Map(), started: Date.now() };
    this.entries.set(src.label, e);
    this.o.slots?.use(e, () => void this.stop(e));
    const fail = (msg: string) => {
      if (e.state === 'failed') return;
      e.state = 'failed';
      e.error = msg;
      e.failedAt = Date.now();
      for (const done of e.pending.values()) done({ error: msg });
      e.pending.clear();
      this.o.log(`airlock serve: local search index of ${src.label} failed: ${msg}`);
    };
    let worker: Worker;
    try {
      worker = spawnWorker(ENTRY, input, { resourceLimits: { maxOldGenerationSizeMb: this.o.maxHeapMb ?? 1024 } });
    } catch (err) {
      fail(err instanceof Error ? err.message : String(err));
      return e;
    }
    e.worker = worker;
    worker.unref();
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'ready') {
        e.state = 'ready';
        this.o.log(readyLine(src.label, m.report));
      } else if (m.type === 'failed') {
        fail(m.error);
        void worker.terminate();
      } else {
        const done = e.pending.get(m.id);
        e.pending.delete(m.id);
        done?.(m);
      }
    });
    worker.on('error', (err) => fail(err.message));
    worker.on('exit', (code) => {
      if (e.worker === worker) e.worker = null;
      if (e.state !== 'failed' && this.entries.get(src.label) === e) fail(`search worker exited (code ${code})`);
    });
    return e;
  }

  private async stop(e: Entry): Promise<void> {
    this.o.slots?.release(e);
    if (this.entries.get(e.version) === e) this.entries.delete(e.version);
    for (const done of e.pending.values()) done({ error: 'version no longer served' });
    e.pending.clear();
    const w = e.worker;
    e.worker = null;
    if (w) await w.terminate();
  }
}

function readyLine(label: string, r: BuildReport): string {
  const what = r.from === 'cache' ? 'loaded from its cache file' : 'built';
  const notes = r.notes.length ? `; ${r.notes.slice(0, 3).join('; ')}${r.notes.length > 3 ? ` (+${r.notes.length - 3} more)` : ''}` : '';
  return `airlock serve: local search index of ${label} ${what} in ${(r.ms / 1000).toFixed(1)} s (${r.pages} pages)${notes}`;
}
