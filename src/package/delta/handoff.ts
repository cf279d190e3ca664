/**
 * Files handed from the delta rebuild (apply.ts) to the canonical package writer (canonical.ts)
 * running beside it: the writer takes the target's files in manifest order while the rebuild is
 * still writing later ones. A file the rebuild produces is taken once it is complete on disk,
 * with its bytes when they fit the budget (else the writer reads the disk); a file taken from
 * the base is on disk once the rebuild has linked them all. A failed rebuild fails every wait; a
 * finished one turns a wait for a file it never gave into a read of the disk (where that file's
 * check then fails). Pure bookkeeping, no I/O.
 */
import type { Body } from './canonical.js';

interface Waiter { resolve(b: Body | null): void; reject(err: unknown): void }

export class Handoff {
  private used = 0;
  private readonly held = new Map<string, Body | null>();
  private readonly waiting = new Map<string, Waiter>();
  private state: { done: true } | { failed: unknown } | null = null;
  private readonly linkedP: Promise<void>;
  private settleLinked!: { resolve(): void; reject(err: unknown): void };

  /** `produced`: the paths the rebuild writes (patches and whole files); `max`: bytes held at most. */
  constructor(private readonly produced: ReadonlySet<string>, private readonly max: number) {
    this.linkedP = new Promise<void>((resolve, reject) => { this.settleLinked = { resolve, reject }; });
    this.linkedP.catch(() => {}); // taken (and rethrown) by the writer; never unhandled
  }

  /** The rebuild: every file taken from the base is in place. */
  linked(): void {
    this.settleLinked.resolve();
  }

  /** The rebuild: `path` is complete and durable; `body` its exact bytes and their sha256 (or null: read the disk). */
  give(path: string, body: Body | null): void {
    const w = this.waiting.get(path);
    if (w) {
      this.waiting.delete(path);
      return w.resolve(body); // the writer is waiting for it: taken now, held no longer than its write
    }
    const kept = body !== null && this.used + body.bytes.length <= this.max ? body : null;
    if (kept) this.used += kept.bytes.length;
    this.held.set(path, kept);
  }

  /** The rebuild ended without error: waits for files it did not give read the disk. */
  done(): void {
    this.state ??= { done: true };
    this.settleLinked.resolve();
    for (const w of this.waiting.values()) w.resolve(null);
    this.waiting.clear();
  }

  /** The rebuild failed: every wait fails with its error. */
  fail(err: unknown): void {
    this.state = { failed: err };
    this.settleLinked.reject(err);
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
    this.held.clear();
  }

  /** The writer: the file's bytes, or null once it can be read from the disk. */
  take(path: string): Promise<Body | null> {
    if (!this.produced.has(path)) return this.linkedP.then(() => null);
    if (this.held.has(path)) {
      const b = this.held.get(path)!;
      this.held.delete(path);
      if (b) this.used -= b.bytes.length;
      return Promise.resolve(b);
    }
    if (this.state && 'failed' in this.state) return Promise.reject(this.state.failed);
    if (this.state) return Promise.resolve(null);
    return new Promise((resolve, reject) => this.waiting.set(path, { resolve, reject }));
  }
}
