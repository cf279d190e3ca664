/**
 * A small bounded job pool: at most `concurrency` jobs run at once, and submit() waits while
 * more than `maxBytes` of buffered data or more than `maxQueued` jobs are queued or running
 * (memory stays flat whatever the archive size, even for empty files). The first failure is kept
 * and rethrown by submit() and drain(); queued jobs that have not started are dropped then
 * (fail fast: nothing more is written after a write failed).
 */
export class JobPool {
  private running = 0;
  private bytes = 0;
  private readonly queue: { run: () => Promise<void>; bytes: number }[] = [];
  private readonly waiters: (() => void)[] = [];
  private failure: { err: unknown } | undefined;

  constructor(
    private readonly concurrency: number,
    private readonly maxBytes: number,
    private readonly maxQueued = 256,
  ) {}

  async submit(run: () => Promise<void>, bytes: number): Promise<void> {
    this.check();
    this.queue.push({ run, bytes });
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

  private check(): void {
    if (this.failure) throw this.failure.err;
  }

  private wait(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }

  private dropQueued(): void {
    for (const job of this.queue.splice(0)) this.bytes -= job.bytes;
    for (const w of this.waiters.splice(0)) w();
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.running++;
      job.run().then(
        () => this.settle(job.bytes),
        (err: unknown) => {
          if (!this.failure) this.failure = { err };
          this.dropQueued();
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
