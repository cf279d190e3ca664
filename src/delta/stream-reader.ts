import type { Readable } from 'node:stream';
import { MalformedError } from '../errors.js';

/** Reads exact byte counts, in order, from a stream (the delta's gunzipped payload), never more than `limit` in all. */
export class ExactReader {
  private readonly it: AsyncIterator<Buffer>;
  private pending: Buffer = Buffer.alloc(0);
  private total = 0;
  constructor(
    stream: Readable,
    private readonly limit: number,
    private readonly subject: string,
  ) {
    this.it = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  private async more(): Promise<boolean> {
    const r = await this.it.next();
    if (r.done) return false;
    const chunk = r.value;
    this.total += chunk.length;
    if (this.total > this.limit)
      throw new MalformedError('AIRLOCK_DELTA_PAYLOAD', `${this.subject} expands past the ${this.limit} bytes its manifest declares`, {
        subject: this.subject,
      });
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    return true;
  }

  /** Hand `n` bytes to `sink` chunk by chunk. */
  async pipe(n: number, sink: (chunk: Buffer) => Promise<void> | void): Promise<void> {
    let left = n;
    while (left > 0) {
      if (this.pending.length === 0 && !(await this.more())) {
        throw new MalformedError('AIRLOCK_DELTA_PAYLOAD', `${this.subject} ends ${left} bytes short of what its manifest declares`, { subject: this.subject });
      }
      const take = Math.min(left, this.pending.length);
      const chunk = this.pending.subarray(0, take);
      this.pending = this.pending.subarray(take);
      left -= take;
      await sink(chunk);
    }
  }

  async read(n: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    await this.pipe(n, (c) => {
      parts.push(Buffer.from(c));
    });
    return Buffer.concat(parts, n);
  }

  /** After the last op: nothing may be left over. */
  async end(): Promise<void> {
    if (this.pending.length > 0 || (await this.more())) {
      throw new MalformedError('AIRLOCK_DELTA_PAYLOAD', `${this.subject} holds more bytes than its manifest's operations use`, { subject: this.subject });
    }
  }
}
