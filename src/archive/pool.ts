/**
 * A small bounded job pool: at most `concurrency` jobs run at once, and submit() waits while
 * more than `maxBytes` of buffered data are queued or running (memory stays flat whatever the
 * archive size). The first failure is kept and rethrown by drain().
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
  ) {}

  async submit(run: () => Promise<void>, bytes: number): Promise<void> {
    this.check();
    this.queue.push({ run, bytes });
    this.bytes += bytes;
    this.pump();
    while (this.bytes > this.maxBytes && !this.failure) await this.wait();
    this.check();
  }

  async drain(): Promise<void> {
    while (this.running > 0 || this.queue.length > 0) await this.wait();
    this.check();
  }

  private check(): void {
    if (this.failure) throw this.failure.err;
  }

  private wait(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.running++;
      job.run().then(
        () => this.settle(job.bytes),
        (err: unknown) => {
          if (!this.failure) this.failure = { err };
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
