import { availableParallelism } from 'node:os';
import type { TransformContext } from '../../features/index.js';
import type { CachedPage } from './cached.js';
import type { PageJob } from './page.js';
import { JobPool } from '../../util/pool.js';

export const defaultPoolSize = (): number => Math.max(1, availableParallelism());

interface PageTag {
  job: PageJob;
  urgent: boolean;
  owner: Owner;
}

interface Owner {
  context: TransformContext | undefined;
  held: boolean;
  respawns: number;
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** The pages of one version's cache in a shared PageWorkers: what that cache asks of the pool. */
export interface PageQueue {
  submit(job: PageJob, urgent: boolean): Promise<CachedPage>;
  /** Moves a queued page to the front (a request now waits for it); false when it is not queued. */
  hurry(sha256: string): boolean;
  hold(): void;
  release(): void;
  /** Drop this queue's pages not started yet: each of their promises rejects with `reason`. */
  drop(reason: string): void;
}

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
 * for after a switch waited for it. `slots` runs one job on one worker; the pool owns when.
 *
 * One pool serves every version a server prepares (`queue`, one per version's cache, each with its
 * transform options): a library of 500 sites builds its pages on `size` workers, not 500 × size,
 * and a page a reader of one site waits for jumps ahead of every site's background build. A held
 * queue runs only urgent pages until `release` (a server starting up: the background build must
 * not take the cores from the load it waits behind). A worker that dies is replaced at most
 * MAX_RESPAWNS times per queue, so one hostile site's pages cannot use up another's.
 */
export class PageWorkers {
  private readonly pool: JobPool<PageTag>;
  private background = 0;
  private readonly parked: PageSlot[] = [];

  constructor(
    private readonly size: number,
    private readonly slot: () => PageSlot,
  ) {
    // The next page a free worker may build: an urgent one, or a background one within the background's share.
    this.pool = new JobPool<PageTag>(
      size,
      Number.POSITIVE_INFINITY,
      Number.POSITIVE_INFINITY,
      (t) => t!.urgent || (!t!.owner.held && this.background < Math.max(1, this.size - 1)),
    );
  }

  /** A queue for one version's pages, built with `context` (a worker slot's transform options; none for an in-process slot). */
  queue(context?: TransformContext): PageQueue {
    const owner: Owner = { context, held: false, respawns: 0 };
    return {
      submit: (job, urgent) => this.submit({ job, urgent, owner }),
      hurry: (sha256) =>
        this.pool.moveToFront(
          (t) => t!.owner === owner && t!.job.sha256 === sha256,
          (t) => void (t!.urgent = true),
        ),
      hold: () => void (owner.held = true),
      release: () => {
        owner.held = false;
        this.pool.reconsider();
      },
      drop: (reason) => {
        this.pool.dropQueued(reason, (t) => t!.owner === owner);
        if (this.pool.waiting === 0) this.endParked();
      },
    };
  }

  private submit(tag: PageTag): Promise<CachedPage> {
    return new Promise((resolve, reject) => {
      const { job } = tag;
      // Never rejects (a page's failure is its own promise's), so the pool never stops on one.
      void this.pool.submit(() => this.build(tag).then(resolve, (err: unknown) => reject(asError(err))), 0, {
        tag,
        front: tag.urgent,
        onDrop: (reason) => reject(new Error(`transforming ${job.path}: ${String(reason)}`)),
      });
    });
  }

  /** Build one page on a parked or new slot; runs synchronously up to the page's build (the pool's start rule reads `background`). */
  private async build(t: PageTag): Promise<CachedPage> {
    const s = this.live(this.parked.pop() ?? this.slot(), t.owner);
    const bg = !t.urgent;
    if (bg) {
      this.background++;
      this.reserve();
    }
    try {
      return await s.run(t.job, t.owner.context);
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
   * (it fails to start, every time) then fails that queue's pages at once, each naming why.
   */
  private live(s: PageSlot, owner: Owner): PageSlot {
    if (!s.dead?.() || owner.respawns >= MAX_RESPAWNS) return s;
    owner.respawns++;
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
  /** Build one page; `context`: the transform options of its queue (a worker is sent them when they change). */
  run: (job: PageJob, context?: TransformContext) => Promise<CachedPage>;
  end: () => Promise<void>;
  /** Its worker has exited or failed: every page it is given would fail. */
  dead?: () => boolean;
}

/** How many dead slots one queue replaces (a crash per page of a hostile site is not a loop). */
export const MAX_RESPAWNS = 8;
