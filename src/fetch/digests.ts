import { createHash, type Hash } from 'node:crypto';
import { Worker } from 'node:worker_threads';

export interface DigestValues { sha256: string; md5: string | undefined }

/**
 * The MD5 side, in one worker thread. MD5 is checked only against a plain-MD5 ETag, but it is the
 * costliest step of a download (~660 MB/s with OpenSSL on this class of machine, against 1.5 GB/s
 * for SHA-256 with SHA-NI): on the main thread it halved the throughput (bench/fetch.ts). Buffers
 * are transferred, not copied, and come back for reuse, so memory stays bounded by the sink's ring.
 * Inline source: the same code runs from src/ (tests, tsx) and dist/.
 */
const MD5_WORKER = `
const { parentPort } = require('node:worker_threads');
const md5 = require('node:crypto').createHash('md5');
parentPort.on('message', (m) => {
  if (m === 'digest') return parentPort.postMessage(md5.digest('hex'));
  md5.update(new Uint8Array(m.buf, 0, m.len));
  parentPort.postMessage(m.buf, [m.buf]);
});`;

/** Running sha256 (main thread) and md5 (worker, only when an ETag can check it) of the bytes in the part, in order. */
export class Digests {
  private readonly sha256: Hash = createHash('sha256');
  private worker: Worker | undefined;
  private readonly pending: Array<{ ok: (v: unknown) => void; fail: (e: unknown) => void }> = [];
  private failed: unknown;

  constructor(readonly withMd5: boolean) {}

  /**
   * Hash the first `len` bytes of `buf`, which the caller gives up until the promise returns it
   * (possibly as a new Buffer over the same memory). Updates are applied in call order.
   */
  take(buf: Buffer, len: number): Promise<Buffer> {
    this.sha256.update(buf.subarray(0, len));
    if (!this.withMd5) return Promise.resolve(buf);
    const whole = buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength;
    // Only a buffer that owns its whole ArrayBuffer can be transferred; anything else is copied once.
    const own = whole ? buf : Buffer.from(buf.subarray(0, len));
    return this.ask<ArrayBuffer>({ buf: own.buffer, len }, [own.buffer as ArrayBuffer]).then((ab) => whole ? Buffer.from(ab) : buf);
  }

  async digest(): Promise<DigestValues> {
    const md5 = this.withMd5 ? await this.ask<string>('digest', []) : undefined;
    this.close();
    return { sha256: this.sha256.digest('hex'), md5 };
  }

  close(): void {
    void this.worker?.terminate();
    this.worker = undefined;
    this.failed ??= new Error('digests closed');
  }

  private ask<T>(msg: unknown, transfer: ArrayBuffer[]): Promise<T> {
    if (this.failed !== undefined) return Promise.reject(this.failed);
    const w = this.worker ??= this.start();
    if (this.pending.length === 0) w.ref(); // keep the process alive only while an answer is due
    return new Promise<T>((ok, fail) => {
      this.pending.push({ ok: ok as (v: unknown) => void, fail });
      w.postMessage(msg, transfer);
    });
  }

  private start(): Worker {
    const w = new Worker(MD5_WORKER, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 } });
    w.unref();
    w.on('message', (v: unknown) => {
      this.pending.shift()?.ok(v);
      if (this.pending.length === 0) w.unref();
    });
    const die = (err: unknown) => {
      this.failed ??= err;
      for (const p of this.pending.splice(0)) p.fail(err);
    };
    w.on('error', die);
    w.on('exit', (code) => die(new Error(`md5 worker exited (${code})`)));
    return w;
  }
}
