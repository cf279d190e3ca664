import type { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { siblingEntry, spawnWorker } from '../../util/worker.js';
import type { TransformContext } from '../../features/index.js';
import type { CachedPage } from './cached.js';
import type { PageJob } from './page.js';
import type { WorkerReply } from './worker-entry.js';
import { JobPool } from '../../util/pool.js';

const ENTRY = siblingEntry(import.meta.url, 'worker-entry');
const spawn = (context: TransformContext): Worker => spawnWorker(ENTRY, context);

export const defaultPoolSize = (): number => Math.max(1, availableParallelism());

/** Builds one page; resolves with its cache entry or rejects naming the page. */
export type PageRunner = (job: PageJob) => Promise<CachedPage>;

interface PageTag {
  job: PageJob;
  urgent: boolean;
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/**
 * The worker slots pages are built in, for `size` workers, with the order kept by a JobPool: a
 * page a request is waiting for jumps ahead of the background build (`urgent`). With two or more
 * workers the background build takes at most `size - 1` of them, so a page a reader waits for
 * never queues behind a background page (it waited for one, ~20 ms per page on 2 cores right
 * after a switch). Workers start on the first job and end when the queue is empty (a transform
 * worker holds its wasm heap: no idle memory); a worker with nothing it may take while others
 * still build is parked, not ended, so the next urgent page does not wait for a new worker to
 * start. For the same reason the background build, as it starts, also starts the worker it leaves
 * free (parked): a cold worker took 120-260 ms on 2 busy cores, and the first page a reader asked
 * for after a switch waited for it. `slots` runs one job on one worker; the pool owns when. A
 * held queue runs only urgent pages until `release` (a server starting up: the background build
 * must not take the cores from the load it waits behind).
 */
export class PageWorkers {
  private readonly pool: JobPool<PageTag>;
  private background = 0;
  private held = false;
  private readonly parked: PageSlot[] = [];
  private respawns = 0;

  constructor(
    private readonly size: number,
    private readonly slot: () => PageSlot,
  ) {
    // The next page a free worker may build: an urgent one, or a background one within the background's share.
    this.pool = new JobPool<PageTag>(
      size,
      Number.POSITIVE_INFINITY,
      Number.POSITIVE_INFINITY,
      (t) => t!.urgent || (!this.held && this.background < Math.max(1, this.size - 1)),
    );
  }

  submit(job: PageJob, urgent: boolean): Promise<CachedPage> {
    return new Promise((resolve, reject) => {
      const tag = { job, urgent };
      // Never rejects (a page's failure is its own promise's), so the pool never stops on one.
      void this.pool.submit(() => this.build(tag).then(resolve, (err: unknown) => reject(asError(err))), 0, {
        tag,
        front: urgent,
        onDrop: (reason) => reject(new Error(`transforming ${job.path}: ${String(reason)}`)),
      });
    });
  }

  /** Moves a queued page to the front (a request now waits for it); false when it is not queued. */
  hurry(sha256: string): boolean {
    return this.pool.moveToFront(
      (t) => t!.job.sha256 === sha256,
      (t) => void (t!.urgent = true),
    );
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.pool.reconsider();
  }

  /** Drop the queued (not started) pages: each of their promises rejects with `reason`. */
  drop(reason: string): void {
    this.pool.dropQueued(reason);
    this.endParked();
  }

  /** Build one page on a parked or new slot; runs synchronously up to the page's build (the pool's start rule reads `background`). */
  private async build(t: PageTag): Promise<CachedPage> {
    const s = this.live(this.parked.pop() ?? this.slot());
    const bg = !t.urgent;
    if (bg) {
      this.background++;
      this.reserve();
    }
    try {
      return await s.run(t.job);
    } finally {
      if (bg) this.background--;
      this.putBack(s);
    }
  }

  /** Pages still queued (not startable yet): keep the slot warm for them; none: end every slot. */
  private putBack(s: PageSlot): void {
    if (this.pool.waiting > 0 && this.parked.length < this.size) this.parked.push(s);
    else {
      this.endParked();
      void s.end();
    }
  }

  /**
   * `s`, or a new slot when its worker has died (a crash fails the page it was building, not every
   * page after it in that slot). At most MAX_RESPAWNS per queue: a worker that cannot live here
   * (it fails to start, every time) then fails its pages at once, each naming why.
   */
  private live(s: PageSlot): PageSlot {
    if (!s.dead?.() || this.respawns >= MAX_RESPAWNS) return s;
    this.respawns++;
    void s.end();
    return this.slot();
  }

  /** A warm worker for the pages readers wait for, while the background build runs beside it. */
  private reserve(): void {
    if (this.size > 1 && this.parked.length === 0 && this.pool.active < this.size) this.parked.push(this.slot());
  }

  private endParked(): void {
    for (const s of this.parked.splice(0)) void s.end();
  }
}

/** One place where pages are built, one at a time: a worker thread, or the calling thread. */
export interface PageSlot {
  run: PageRunner;
  end: () => Promise<void>;
  /** Its worker has exited or failed: every page it is given would fail. */
  dead?: () => boolean;
}

/** How many dead slots one queue replaces (a crash per page of a hostile site is not a loop). */
export const MAX_RESPAWNS = 8;

/** A worker thread building pages with src/features' transform for `context`. */
export function workerSlot(context: TransformContext): PageSlot {
  const w = spawn(context);
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
    run: async (job) => {
      await up;
      if (failed) throw new Error(`transforming ${job.path}: ${failed.message}`);
      return new Promise<CachedPage>((resolve, reject) => {
        waiting = { id: nextId++, job, resolve, reject };
        w.postMessage({ id: waiting.id, job });
      });
    },
    end: async () => {
      w.removeAllListeners('exit');
      await w.terminate();
    },
    dead: () => failed !== null,
  };
}
