import { close, closeSync, constants, open, openSync, read } from 'node:fs';
import { promisify } from 'node:util';

const readP = promisify(read);
const openP = promisify(open);
const closeP = promisify(close);
/** O_NONBLOCK: a FIFO or device where a file should be fails its read instead of hanging the import. */
const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The first `max` bytes of a file at most (read `size + 1` to see a file that grew past its
 * listed size). Open and close are synchronous and the read goes to the thread pool: on this
 * kind of VM every thread-pool round trip costs a cross-thread wake-up, and a delta import of
 * 3,000 cached base files was 15 % slower with all three on the pool (measured: bench:delta
 * warm), while a cold read is what must not hold up the main thread (cold: 0.82x of fully
 * synchronous reads). A server passes `blocking: false`: there every call goes to the pool, so
 * a cold open never stalls the requests it serves.
 */
export async function readUpTo(path: string, max: number, blocking = true): Promise<Buffer> {
  const fd = blocking ? openSync(path, FLAGS) : await openP(path, FLAGS);
  try {
    const buf = Buffer.allocUnsafe(max);
    let n = 0;
    // A short read of a regular file is its end: no second round trip to read the 0 bytes that
    // say so (one pool trip per file instead of two). Anything else that reads short (a FIFO,
    // an interrupted read) gives fewer bytes than listed, which the caller's size check refuses.
    while (n < max) {
      const want = max - n;
      const r = (await readP(fd, buf, n, want, null)).bytesRead;
      n += r;
      if (r < want) break;
    }
    return buf.subarray(0, n);
  } finally {
    if (blocking) closeSync(fd);
    else await closeP(fd);
  }
}

/**
 * Reads a known list of small files in order, each as readUpTo(path, size + 1), up to `files` of
 * them or `bytes` (beyond the first) ahead of the one taken last, so a cold disk serves them in
 * parallel while the caller works on the current one. take() is called in list order; a file
 * asked for out of order (a caller on its way to a failure) is read on its own.
 */
export class ReadAhead {
  private next = 0;
  private bytes = 0;
  private readonly started: { path: string; size: number; read: Promise<Buffer> }[] = [];
  constructor(
    private readonly list: readonly { path: string; size: number }[],
    private readonly limit: { files: number; bytes: number; blocking?: boolean },
  ) {
    this.fill();
  }

  take(path: string, size: number): Promise<Buffer> {
    const head = this.started[0];
    if (head?.path !== path) return readUpTo(path, size + 1, this.limit.blocking);
    this.started.shift();
    this.bytes -= head.size;
    this.fill();
    return head.read;
  }

  /** Starts no more reads and waits for those running (their descriptors closed); their failures are dropped. */
  async settle(): Promise<void> {
    this.next = this.list.length;
    await Promise.allSettled(this.started.map((s) => s.read));
  }

  private fill(): void {
    const { files, bytes } = this.limit;
    while (this.next < this.list.length && this.started.length < files && (this.started.length === 0 || this.bytes + this.list[this.next]!.size <= bytes)) {
      const f = this.list[this.next++]!;
      const read = readUpTo(f.path, f.size + 1, this.limit.blocking);
      read.catch(() => {}); // its taker sees a failure; one nobody takes is dropped, not unhandled
      this.started.push({ ...f, read });
      this.bytes += f.size;
    }
  }
}
