import { open, type FileHandle } from 'node:fs/promises';
import { Digests } from './digests.js';
import type { BodyTarget } from './get.js';
import { minorGc } from '../util/gc.js';

export type OpenFile = (path: string, flags: string) => Promise<FileHandle>;

/** The most bytes the part may hold, and the refusal when more arrive (an endless or oversized body). */
export interface SinkCap {
  max: number;
  refuse: (arrived: number) => Error;
}

/** Ring of RING × SLOT bytes: the whole memory a download uses for its body, whatever the object's size. */
const SLOT = 2 << 20;
const RING = 6;
const LINGER_MS = 100;

/**
 * The part file at a fixed offset, fed from the network. Chunks are coalesced into 2 MiB slots
 * (few syscalls, buffers reused: no page faults or garbage per chunk); a full slot is written with
 * positional writes, one at a time and in order, and hashed only after its bytes landed. So
 * `written` and the digests always describe exactly the bytes on disk, even when the connection
 * drops or the disk fills in the middle of a slot: resume never hashes a byte twice or skips one.
 * No fsync per attempt: a completed part is copied into the package, which is fsynced; a part
 * kept for a later resume is fsynced once when the download stops (download.ts, syncPart).
 */
export class PartSink implements BodyTarget {
  written: number;
  errored: unknown;
  private readonly free: Buffer[] = [];
  private slots = 0;
  private cur: Buffer | undefined;
  private fill = 0;
  private timer: NodeJS.Timeout | undefined;
  private received: number;
  private chain: Promise<void> = Promise.resolve();
  private resume: (() => void) | undefined;
  private abort: ((err: unknown) => void) | undefined;

  private constructor(
    private readonly fh: FileHandle,
    offset: number,
    private readonly digests: Digests,
    private readonly onBytes: ((bytes: number) => void) | undefined,
    private readonly cap: SinkCap | undefined,
  ) {
    this.written = offset;
    this.received = offset;
  }

  static async open(
    path: string,
    offset: number,
    digests: Digests,
    o: { openFile?: OpenFile; onBytes?: (bytes: number) => void; cap?: SinkCap } = {},
  ): Promise<PartSink> {
    // 'r+' keeps the bytes we already have; offset 0 means a fresh start, so truncate.
    const fh = await (o.openFile ?? open)(path, offset === 0 ? 'w' : 'r+');
    return new PartSink(fh, offset, digests, o.onBytes, o.cap);
  }

  /** Copy a chunk in. False: every slot is busy, stop reading until onRoom's callback. */
  push(chunk: Buffer): boolean {
    if (this.errored !== undefined) return false;
    // More bytes than the part may hold: none of them is written, the connection is dropped and close() throws the refusal.
    if (this.cap && this.received + chunk.length > this.cap.max) {
      this.fail(this.cap.refuse(this.received + chunk.length));
      return false;
    }
    for (let off = 0; off < chunk.length;) {
      // A chunk that outruns the pause still fits: the ring is only full with an empty slot in hand.
      const cur = (this.cur ??= this.slot() ?? this.extra());
      const n = chunk.copy(cur, this.fill, off);
      this.fill += n;
      off += n;
      if (this.fill === SLOT) this.flush();
    }
    this.received += chunk.length;
    // On a slow link a slot would take minutes to fill: write what sits there after a moment, so
    // the part grows as the bytes arrive and an interrupted run keeps them.
    if (this.fill > 0)
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        if (this.fill > 0) this.flush();
      }, LINGER_MS).unref();
    this.onBytes?.(this.received);
    this.cur ??= this.slot();
    return this.cur !== undefined && (this.free.length > 0 || this.slots < RING);
  }

  onRoom(resume: () => void, abort: (err: unknown) => void): void {
    this.resume = resume;
    this.abort = abort;
  }

  /** Write what is left, wait for every write; the sink's (the disk's) error is thrown. */
  async close(): Promise<void> {
    if (this.fill > 0) this.flush();
    clearTimeout(this.timer);
    await this.chain;
    if (this.errored === undefined) this.onBytes?.(this.written);
    await this.fh.truncate(this.written).catch(() => {});
    await this.fh.close().catch(() => {});
    if (this.errored !== undefined) throw this.errored;
  }

  private slot(): Buffer | undefined {
    if (this.free.length > 0) return this.free.pop();
    if (this.slots >= RING) return undefined;
    this.slots++;
    return Buffer.allocUnsafeSlow(SLOT);
  }

  private extra(): Buffer {
    this.slots++;
    return Buffer.allocUnsafeSlow(SLOT);
  }

  private flush(): void {
    minorGc(); // the socket's spent buffers, see util/gc.ts
    clearTimeout(this.timer);
    this.timer = undefined;
    const buf = this.cur!,
      len = this.fill;
    this.cur = undefined;
    this.fill = 0;
    this.chain = this.chain.then(() => this.land(buf, len));
  }

  private async land(buf: Buffer, len: number): Promise<void> {
    let done = 0;
    try {
      // A short write (possible near ENOSPC) is continued; after an error only what landed counts.
      while (done < len && this.errored === undefined) done += (await this.fh.write(buf, done, len - done, this.written + done)).bytesWritten;
    } catch (err) {
      this.fail(err);
    }
    this.written += done;
    this.digests.update(buf, done);
    this.give(buf);
  }

  private give(buf: Buffer): void {
    // A slot allocated past the ring (a chunk that outran the pause) is dropped, not kept.
    if (this.slots > RING) this.slots--;
    else this.free.push(buf);
    if (this.errored === undefined) this.resume?.();
  }

  /** The disk failed: stop the connection; close() throws the error. */
  private fail(err: unknown): void {
    this.errored ??= err;
    this.abort?.(err);
  }
}

/**
 * Rebuild the digests of an existing part by reading it once (node's Hash state cannot be
 * persisted across runs, so re-reading is the honest way to resume the digest).
 */
export async function rehash(path: string, length: number): Promise<Digests> {
  const d = new Digests();
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafeSlow(SLOT);
    for (let at = 0; at < length;) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(SLOT, length - at), at);
      if (bytesRead === 0) throw new Error(`${path} is shorter than ${length} bytes`);
      d.update(buf, bytesRead);
      at += bytesRead;
    }
  } finally {
    await fh.close();
  }
  return d;
}

/** Make a part that is kept for a later run durable (it will be trusted up to its length). */
export async function syncPart(path: string): Promise<void> {
  const fh = await open(path, 'r+').catch(() => undefined);
  if (!fh) return;
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
