/**
 * A one-reader queue between event-driven parsers and an async generator: events push,
 * the generator pulls. An error wins over queued items (fail closed: nothing after a refusal).
 */
export class Channel<T> {
  private readonly items: T[] = [];
  private error: { err: unknown } | undefined;
  private closed = false;
  private wake: (() => void) | undefined;

  push(item: T): void {
    this.items.push(item);
    this.notify();
  }

  fail(err: unknown): void {
    if (!this.error) this.error = { err };
    this.notify();
  }

  close(): void {
    this.closed = true;
    this.notify();
  }

  get failed(): boolean {
    return this.error !== undefined;
  }

  async next(): Promise<T | undefined> {
    for (;;) {
      if (this.error) throw this.error.err;
      if (this.items.length > 0) return this.items.shift();
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}
