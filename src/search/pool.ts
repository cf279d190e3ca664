import type { Worker } from 'node:worker_threads';
import { siblingEntry, spawnWorker } from '../util/worker.js';
import type { BuildInput, BuildReport } from './build.js';
import type { QueryOptions, SearchHit } from './engine.js';
import type { PoolRequest, WorkerMessage } from './worker-entry.js';

/**
 * The worker threads search indexes live in. One store's server has a pool of one worker; a
 * library's sites share one pool of a few, each worker holding many indexes (a 100-page site's
 * index is a few hundred KB; a worker thread and its heap cost more than that). An index is put on
 * the worker holding the fewest bytes and stays there until it is dropped (its version no longer
 * served) or let go: past `budgetBytes` of loaded indexes the least recently used is let go (never
 * the last one), and its next query loads it again from its cache file. A worker holding nothing
 * ends. A worker that dies (an absurd site over its heap bound) fails the indexes it was building
 * (each retried later by its owner) and forgets those it held (loaded again at their next query).
 */
export type IndexState = { state: 'absent' } | { state: 'building' } | { state: 'ready' } | { state: 'failed'; error: string; failedAt: number };

export interface SearchPoolOptions {
  /** Worker threads the indexes are spread over. */
  workers: number;
  /** Bytes of loaded index (as their cache files count them) kept before the least recently used is let go. */
  budgetBytes: number;
  /** Heap bound of each worker, in MB. */
  maxHeapMb?: number;
}

/** What the owner of an index hears of its load. */
export interface IndexEvents {
  ready(report: BuildReport): void;
  failed(error: string): void;
}

export type PoolAnswer = { hits: SearchHit[] } | { error: string };

interface Slot {
  worker: Worker | null;
  held: Set<Held>;
  pending: Map<number, (m: PoolAnswer) => void>;
}

interface Held {
  key: string;
  gen: number;
  slot: Slot;
  state: 'building' | 'ready' | 'failed';
  error: string;
  failedAt: number;
  bytes: number;
  events: IndexEvents;
}

const ENTRY = siblingEntry(import.meta.url, 'worker-entry');

export class SearchPool {
  private readonly slots: Slot[];
  /** Every index the pool knows, in the order of its last use (the oldest first). */
  private readonly held = new Map<string, Held>();
  private nextId = 1;
  private nextGen = 1;
  private closed = false;

  constructor(private readonly o: SearchPoolOptions) {
    this.slots = Array.from({ length: Math.max(1, o.workers) }, () => ({ worker: null, held: new Set<Held>(), pending: new Map() }));
  }

  state(key: string): IndexState {
    const h = this.held.get(key);
    if (!h) return { state: 'absent' };
    return h.state === 'failed' ? { state: 'failed', error: h.error, failedAt: h.failedAt } : { state: h.state };
  }

  /** Loads (or builds) `key`'s index from `input`, replacing what the pool held under that key. */
  load(key: string, input: BuildInput, events: IndexEvents): void {
    if (this.closed) return;
    const old = this.held.get(key);
    if (old) this.forget(old);
    const slot = this.lightest();
    const h: Held = { key, gen: this.nextGen++, slot, state: 'building', error: '', failedAt: 0, bytes: 0, events };
    this.held.set(key, h);
    slot.held.add(h);
    let worker: Worker;
    try {
      worker = this.workerOf(slot);
    } catch (err) {
      return this.fail(h, err instanceof Error ? err.message : String(err));
    }
    worker.postMessage({ type: 'load', key, gen: h.gen, input } satisfies PoolRequest);
  }

  /** `key` was just used: it is let go last. */
  touch(key: string): void {
    const h = this.held.get(key);
    if (!h) return;
    this.held.delete(key);
    this.held.set(key, h);
  }

  query(key: string, query: string, options: QueryOptions, timeoutMs: number): Promise<PoolAnswer> {
    const h = this.held.get(key);
    const worker = h?.slot.worker;
    if (!h || h.state !== 'ready' || !worker) return Promise.resolve({ error: 'the index is not loaded' });
    const slot = h.slot;
    const id = this.nextId++;
    return new Promise<PoolAnswer>((resolve) => {
      const timer = setTimeout(() => {
        slot.pending.delete(id);
        resolve({ error: `no answer within ${timeoutMs} ms` });
      }, timeoutMs);
      slot.pending.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      worker.postMessage({ type: 'query', id, key, query, options } satisfies PoolRequest);
    });
  }

  /** The index under `key` is no longer wanted. */
  drop(key: string): void {
    const h = this.held.get(key);
    if (h) this.forget(h);
  }

  /** Bytes of the indexes loaded now. */
  get bytes(): number {
    let n = 0;
    for (const h of this.held.values()) n += h.bytes;
    return n;
  }

  /** Workers running now. */
  get workers(): number {
    return this.slots.filter((s) => s.worker !== null).length;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.held.clear();
    await Promise.all(this.slots.map((s) => this.end(s, 'the server is closing')));
  }

  private lightest(): Slot {
    const weight = (s: Slot) => [...s.held].reduce((n, h) => n + h.bytes, 0) + s.held.size;
    return this.slots.reduce((a, b) => (weight(b) < weight(a) ? b : a));
  }

  private workerOf(slot: Slot): Worker {
    if (slot.worker) return slot.worker;
    const w = spawnWorker(ENTRY, null, { resourceLimits: { maxOldGenerationSizeMb: this.o.maxHeapMb ?? 1024 } });
    slot.worker = w;
    w.unref();
    let why = '';
    w.on('message', (m: WorkerMessage) => this.heard(slot, m));
    w.on('error', (err: NodeJS.ErrnoException) => {
      why = err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `the index needs more memory than a search worker's ${this.o.maxHeapMb ?? 1024} MB` : err.message;
    });
    w.on('exit', (code) => {
      if (slot.worker !== w) return; // ended on purpose
      slot.worker = null;
      this.lost(slot, why || `search worker exited (code ${code})`);
    });
    return w;
  }

  private heard(slot: Slot, m: WorkerMessage): void {
    if (m.type === 'result') {
      const done = slot.pending.get(m.id);
      slot.pending.delete(m.id);
      done?.(m.hits ? { hits: m.hits } : { error: m.error ?? 'no answer' });
      if (slot.held.size === 0) void this.end(slot, '');
      return;
    }
    const h = this.held.get(m.key);
    if (!h || h.gen !== m.gen || h.slot !== slot) return; // dropped or loaded again meanwhile
    if (m.type === 'failed') return this.fail(h, m.error);
    h.state = 'ready';
    h.bytes = m.report.bytes;
    h.events.ready(m.report);
    this.trim();
  }

  /** Past the budget, let the least recently used loaded indexes go (never the last one). */
  private trim(): void {
    let total = this.bytes;
    let loaded = [...this.held.values()].filter((h) => h.state === 'ready').length;
    for (const h of [...this.held.values()]) {
      if (total <= this.o.budgetBytes || loaded <= 1) return;
      if (h.state !== 'ready') continue;
      total -= h.bytes;
      loaded--;
      this.forget(h);
    }
  }

  private fail(h: Held, error: string): void {
    h.state = 'failed';
    h.error = error;
    h.failedAt = Date.now();
    h.bytes = 0;
    h.slot.held.delete(h);
    if (h.slot.held.size === 0) void this.end(h.slot, '');
    h.events.failed(error);
  }

  private forget(h: Held): void {
    if (this.held.get(h.key) === h) this.held.delete(h.key);
    if (!h.slot.held.delete(h)) return;
    h.slot.worker?.postMessage({ type: 'drop', key: h.key } satisfies PoolRequest);
    if (h.slot.held.size === 0) void this.end(h.slot, '');
  }

  /** A worker died: what it was building failed, what it held is loaded again when next asked. */
  private lost(slot: Slot, why: string): void {
    for (const done of slot.pending.values()) done({ error: why });
    slot.pending.clear();
    for (const h of [...slot.held]) {
      if (h.state === 'building') this.fail(h, why);
      else this.forget(h);
    }
  }

  /** Ends a worker holding nothing (or every worker, closing); queries still waiting are answered first. */
  private async end(slot: Slot, why: string): Promise<void> {
    const w = slot.worker;
    if (!w || (why === '' && slot.pending.size > 0)) return;
    slot.worker = null;
    for (const done of slot.pending.values()) done({ error: why || 'the index was let go' });
    slot.pending.clear();
    await w.terminate();
  }
}
