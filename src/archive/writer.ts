import { closeSync, constants, fsync, close, mkdirSync, openSync, writeSync } from 'node:fs';
import { mkdir, readdir, rename, rmdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AirlockError } from '../errors.js';
import { fsyncDir } from '../util/fsx.js';

// O_EXCL: never open an existing file, and with O_CREAT never follow a symlink at the name.
const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
/** fsync-behind: files are synced in the background, at most this many at once and queued. */
const SYNC_CONCURRENCY = 2;
const SYNC_QUEUE_MAX = 256;

/**
 * Writes validated path segments under one root and nowhere else: every target is
 * join(root, ...segments) where no segment is "..", "." or contains a separator (checkEntryPath),
 * every folder is made by us, every file is new (O_EXCL). Small synchronous writes go straight to
 * the page cache (like GNU tar); fsync runs behind on the thread pool and is awaited in finish().
 */
export class TreeWriter {
  private readonly made = new Set<string>();
  private readonly queue: number[] = [];
  private active = 0;
  private failure: unknown;
  private waiters: (() => void)[] = [];

  private constructor(readonly root: string) {}

  static async create(dest: string): Promise<TreeWriter> {
    const root = resolve(dest);
    await mkdir(root, { recursive: true });
    if ((await readdir(root)).length > 0) throw new AirlockError('AIRLOCK_DEST_NOT_EMPTY', `extraction folder is not empty: ${root}`, 1, { subject: root });
    return new TreeWriter(root);
  }

  /** Create the file (and its folders); returns an fd for write(). */
  open(segments: string[]): number {
    let rel = '';
    for (let i = 0; i < segments.length - 1; i++) {
      rel = rel ? `${rel}/${segments[i]}` : segments[i]!;
      if (!this.made.has(rel)) {
        mkdirSync(join(this.root, rel));
        this.made.add(rel);
      }
    }
    return openSync(join(this.root, ...segments), CREATE, 0o644);
  }

  write(fd: number, chunk: Buffer): void {
    for (let off = 0; off < chunk.length; ) off += writeSync(fd, chunk, off);
  }

  /** Hand the finished file to the background fsync; waits only when the queue is full. */
  async done(fd: number): Promise<void> {
    this.queue.push(fd);
    this.pump();
    if (this.queue.length > SYNC_QUEUE_MAX) await new Promise<void>((r) => this.waiters.push(r));
  }

  private pump(): void {
    while (this.active < SYNC_CONCURRENCY && this.queue.length > 0) {
      const fd = this.queue.shift()!;
      this.active++;
      fsync(fd, (err) => {
        if (err && this.failure === undefined) this.failure = err;
        close(fd, () => {
          this.active--;
          this.pump();
          if (this.queue.length <= SYNC_QUEUE_MAX) for (const w of this.waiters.splice(0)) w();
        });
      });
    }
  }

  /** All files synced; the wrapping folder moved up; every folder synced (their names are data too). */
  async finish(strip: string): Promise<void> {
    while (this.active > 0 || this.queue.length > 0) await new Promise<void>((r) => this.waiters.push(r));
    if (this.failure !== undefined) throw this.failure;
    let dirs = [...this.made];
    if (strip) {
      await this.unwrap(strip.slice(0, -1));
      dirs = dirs.filter((d) => d !== strip.slice(0, -1)).map((d) => d.slice(strip.length));
    }
    await Promise.all(dirs.map((d) => fsyncDir(join(this.root, d))));
    await fsyncDir(this.root);
  }

  /** root/site/* -> root/*, through a temp name so that site/site/ cannot clash. */
  private async unwrap(folder: string): Promise<void> {
    const tmp = join(this.root, `.airlock-unwrap-${randomBytes(6).toString('hex')}`);
    await rename(join(this.root, folder), tmp);
    for (const name of await readdir(tmp)) await rename(join(tmp, name), join(this.root, name));
    await rmdir(tmp);
  }

  /** Close a file left open by an error (best effort; the caller removes the folder). */
  abort(fd: number | undefined): void {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        /* already closed */
      }
    }
  }
}
