import { closeSync, mkdirSync, openSync } from 'node:fs';
import { mkdir, readdir, rename, rmdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AirlockError } from '../errors.js';
import { fsyncDir, syncFileSystem } from '../util/fsx.js';
import { JobPool } from '../util/pool.js';
import { CREATE, fsyncByName, settledAll, syncAndClose, writeAll, writeSmall } from './write-io.js';
/**
 * File creation and fsync are latency-bound (journal, VM exits), not CPU-bound: files in flight
 * on the thread pool beat one at a time, and fsyncs that wait together are committed by one
 * journal transaction (ext4, xfs). Measured by in-process imports on this VM class (medians of 4-5):
 * 3 in flight → 16 took the generated 3,000-page site from 2.8 to 1.95 s and the
 * real-export-shaped one from 4.1 to 3.1 s; 32 gained nothing more. MAX_BUFFERED bounds memory.
 * Files up to SMALL are buffered whole and written by a pool job (open, write, close);
 * bigger ones stream through a synchronous fd.
 * Durability: on Linux no file is fsynced on its own; finish() flushes the whole file system
 * once (syncFileSystem: one device flush instead of one per file; `airlock import` of the
 * generated 3,000-page site, 10 paired runs on a busy 2-vCPU VM: median 10.5 s → 6.9 s, faster
 * in every pair; idle figures in docs/benchmarks.md). Where that cannot be done, finish()
 * fsyncs every file and folder, as every file used to be when written. Either way nothing is
 * durable-by-promise before finish() returns, and the caller publishes the tree only after it.
 */
const CONCURRENCY = 16;
const SMALL = 1024 * 1024;
const MAX_BUFFERED = 8 * 1024 * 1024;
/** Files are fsynced one by one only where the file system cannot be flushed at once (see above). */
const SYNC_EACH = process.platform !== 'linux';

export interface FileSink {
  write(chunk: Buffer): void;
  /** Queue the rest (write, fsync, close); resolves when there is room for the next file. */
  end(): Promise<void>;
  /** The entry failed: close its file at once (the caller removes the whole tree). */
  abort(): void;
}

/**
 * Writes validated path segments under one root and nowhere else: every target is
 * join(root, ...segments) where no segment is "..", "." or contains a separator (checkEntryPath),
 * every folder is made by us, every file is new (O_EXCL). Every file is fsynced before finish().
 */
export class TreeWriter {
  private readonly made = new Set<string>();
  /** Big files' descriptors from open until their pool job closes them (settle() closes the rest). */
  private readonly open = new Set<number>();
  private readonly pool = new JobPool(CONCURRENCY, MAX_BUFFERED);
  /** Every file written, for the per-file fsync fallback. */
  private readonly written: string[] = [];

  private constructor(readonly root: string) {}

  static async create(dest: string): Promise<TreeWriter> {
    const root = resolve(dest);
    await mkdir(root, { recursive: true });
    if ((await readdir(root)).length > 0) throw new AirlockError('AIRLOCK_DEST_NOT_EMPTY', `extraction folder is not empty: ${root}`, 1, { subject: root });
    return new TreeWriter(root);
  }

  file(segments: string[]): FileSink {
    const target = join(this.root, ...this.parents(segments), segments[segments.length - 1]!);
    this.written.push(target);
    const chunks: Buffer[] = [];
    let size = 0;
    let fd: number | undefined;
    return {
      write: (chunk) => {
        if (fd === undefined && size + chunk.length <= SMALL) {
          chunks.push(chunk);
          size += chunk.length;
          return;
        }
        if (fd === undefined) {
          fd = openSync(target, CREATE, 0o644);
          this.open.add(fd);
          for (const c of chunks.splice(0)) writeAll(fd, c);
        }
        writeAll(fd, chunk);
      },
      end: () => {
        if (fd !== undefined) {
          const h = fd;
          return this.pool.submit(() => syncAndClose(h, SYNC_EACH).finally(() => this.open.delete(h)), 0);
        }
        return this.pool.submit(() => writeSmall(target, chunks, size, SYNC_EACH), size);
      },
      abort: () => {
        if (fd !== undefined) this.closeNow(fd);
        fd = undefined;
        chunks.length = 0;
      },
    };
  }

  /** Folders are made synchronously, in order, before any file job can need them. */
  private parents(segments: string[]): string[] {
    let rel = '';
    for (let i = 0; i < segments.length - 1; i++) {
      rel = rel ? `${rel}/${segments[i]}` : segments[i]!;
      if (!this.made.has(rel)) {
        mkdirSync(join(this.root, rel));
        this.made.add(rel);
      }
    }
    return segments.slice(0, -1);
  }

  /** The wrapping folder moved up; every file and folder durable (their names are data too). */
  async finish(strip: string): Promise<void> {
    await this.pool.drain();
    let dirs = [...this.made];
    if (strip) {
      const wrap = strip.slice(0, -1);
      await this.unwrap(wrap);
      dirs = dirs.filter((d) => d !== wrap).map((d) => d.slice(strip.length));
      const from = join(this.root, wrap);
      for (let i = 0; i < this.written.length; i++) this.written[i] = join(this.root, this.written[i]!.slice(from.length + 1));
    }
    if (!SYNC_EACH && (await syncFileSystem(this.root))) return;
    if (!SYNC_EACH) for (const f of this.written.splice(0)) await this.pool.submit(() => fsyncByName(f), 0);
    await this.pool.drain();
    await settledAll(dirs.map((d) => fsyncDir(join(this.root, d))));
    await fsyncDir(this.root);
  }

  /**
   * After a failure: drop the files not yet started and wait for those being written, so that
   * no write is in flight when the caller removes the folder (a write landing in a folder
   * being removed made rm fail with ENOTEMPTY and left files behind).
   */
  async settle(): Promise<void> {
    await this.pool.cancel();
    for (const fd of this.open) this.closeNow(fd);
  }

  private closeNow(fd: number): void {
    this.open.delete(fd);
    try {
      closeSync(fd);
    } catch {
      // already closed by its job
    }
  }

  /** root/site/* -> root/*, through a temp name so that site/site/ cannot clash. */
  private async unwrap(folder: string): Promise<void> {
    const tmp = join(this.root, `.airlock-unwrap-${randomBytes(6).toString('hex')}`);
    await rename(join(this.root, folder), tmp);
    for (const name of await readdir(tmp)) await rename(join(tmp, name), join(this.root, name));
    await rmdir(tmp);
  }
}
