/** How one job enters a JobPool. */
export interface JobOptions<T> {
  /** Queued before the jobs that wait (someone is waiting for this one). */
  front?: boolean;
  /** What the pool's start rule and moveToFront() see of the job. */
  tag?: T;
  /** The job was dropped before it started (a failure, cancel(), dropQueued()): it will never run. */
  onDrop?: (reason: unknown) => void;
}

interface Queued<T> {
  run: () => Promise<void>;
  bytes: number;
  tag: T | undefined;
  onDrop?: (reason: unknown) => void;
}

/**
 * A small bounded job pool: at most `concurrency` jobs run at once, and submit() waits while
 * more than `maxBytes` of buffered data or more than `maxQueued` jobs are queued or running
 * (memory stays flat whatever the archive size, even for empty files). The first failure is kept
 * and rethrown by submit() and drain(); queued jobs that have not started are dropped then
 * (fail fast: nothing more is written after a write failed). Jobs start in queue order; a
 * `mayStart` rule may hold the head of the queue back (a share of the slots kept for waiting
 * readers), reconsider() applies it again once what it reads has changed.
 */
export class JobPool<T = undefined> {
  private running = 0;
  private bytes = 0;
  private readonly queue: Queued<T>[] = [];
  private readonly waiters: (() => void)[] = [];
  private failure: { err: unknown } | undefined;

  constructor(
    private readonly concurrency: number,
    private readonly maxBytes: number,
    private readonly maxQueued = 256,
    private readonly mayStart: (tag: T | undefined) => boolean = () => true,
  ) {}

  /** Jobs running now. */
  get active(): number {
    return this.running;
  }

  /** Jobs queued and not started. */
  get waiting(): number {
    return this.queue.length;
  }

  async submit(run: () => Promise<void>, bytes: number, o: JobOptions<T> = {}): Promise<void> {
    this.check();
    const job = { run, bytes, tag: o.tag, onDrop: o.onDrop };
    if (o.front) this.queue.unshift(job);
    else this.queue.push(job);
    this.bytes += bytes;
    this.pump();
    while ((this.bytes > this.maxBytes || this.queue.length > this.maxQueued) && !this.failure) await this.wait();
    this.check();
  }

  /** Wait until no job runs or waits; rethrows the first failure. */
  async drain(): Promise<void> {
    while (this.running > 0 || this.queue.length > 0) await this.wait();
    this.check();
  }

  /**
   * Drop the jobs that have not started and wait for the running ones to end, whatever they
   * end with: afterwards nothing of this pool touches the disk any more.
   */
  async cancel(): Promise<void> {
    this.dropQueued();
    while (this.running > 0) await this.wait();
  }

  /** Drop the jobs that have not started (those whose tag `matches`; each told through its onDrop); running ones go on. */
  dropQueued(reason?: unknown, matches?: (tag: T | undefined) => boolean): void {
    const dropped = matches ? this.queue.filter((j) => matches(j.tag)) : this.queue.slice();
    if (dropped.length === 0) return;
    const kept = matches ? this.queue.filter((j) => !matches(j.tag)) : [];
    this.queue.splice(0, this.queue.length, ...kept);
    for (const job of dropped) {
      this.bytes -= job.bytes;
      job.onDrop?.(reason);
    }
    for (const w of this.waiters.splice(0)) w();
  }

  /** Move the first queued job whose tag matches to the front (after `update` of its tag); false when none is queued. */
  moveToFront(match: (tag: T | undefined) => boolean, update?: (tag: T | undefined) => void): boolean {
    const i = this.queue.findIndex((j) => match(j.tag));
    if (i < 0) return false;
    const [job] = this.queue.splice(i, 1);
    update?.(job!.tag);
    this.queue.unshift(job!);
    this.pump();
    return true;
  }

  /** Start what the start rule now allows (what it reads has changed). */
  reconsider(): void {
    this.pump();
  }

  private check(): void {
    if (this.failure) throw this.failure.err;
  }

  private wait(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0 && this.mayStart(this.queue[0]!.tag)) {
      const job = this.queue.shift()!;
      this.running++;
      job.run().then(
        () => this.settle(job.bytes),
        (err: unknown) => {
          if (!this.failure) this.failure = { err };
          this.dropQueued(err);
          this.settle(job.bytes);
        },
      );
    }
  }

  private settle(bytes: number): void {
    this.running--;
    this.bytes -= bytes;
    this.pump();
    for (const w of this.waiters.splice(0)) w();
  }
}

/**
 * Run `fn` over `items` with at most `width` in flight (fsyncs, copies, checks of many small
 * files), on a JobPool: the first failure stops what has not started and is rethrown.
 */
export async function inPool<T>(items: readonly T[], fn: (item: T) => Promise<unknown>, width = 16): Promise<void> {
  const pool = new JobPool(width, Number.POSITIVE_INFINITY, width);
  try {
    for (const item of items) await pool.submit(async () => void (await fn(item)), 0);
    await pool.drain();
  } catch (err) {
    await pool.cancel();
    throw err;
  }
}
