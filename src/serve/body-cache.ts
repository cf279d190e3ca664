import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { StoreError } from '../errors.js';

/** A file whose bytes differ from the digest its index recorded (a torn or tampered cache file). */
export class DamagedFileError extends StoreError {
  constructor(file: string) {
    super('AIRLOCK_DAMAGED_CACHE_FILE', `cached file ${file} does not match its recorded digest`, { subject: file });
  }
}

/**
 * Byte-bounded LRU of small file bodies, keyed by absolute path (paths include the version
 * folder, so versions never share an entry). Memory stays near the budget whatever the site's
 * size; concurrent misses on one file share a single read.
 */
export class BodyCache {
  private readonly map = new Map<string, Buffer>();
  private readonly pending = new Map<string, Promise<Buffer>>();
  private bytes = 0;

  constructor(readonly budget: number) {}

  get size(): number {
    return this.bytes;
  }

  get(file: string): Buffer | undefined {
    const buf = this.map.get(file);
    if (buf !== undefined) {
      // Refresh recency: Map iteration order is insertion order, so the first key is the LRU.
      this.map.delete(file);
      this.map.set(file, buf);
    }
    return buf;
  }

  /** Read into the cache; with `sha256`, bytes that do not match are refused, never cached. */
  load(file: string, sha256: string | null = null): Promise<Buffer> {
    let p = this.pending.get(file);
    if (!p) {
      p = readFile(file).then(
        (buf) => {
          this.pending.delete(file);
          if (sha256 !== null && createHash('sha256').update(buf).digest('hex') !== sha256) throw new DamagedFileError(file);
          this.put(file, buf);
          return buf;
        },
        (err: unknown) => {
          this.pending.delete(file);
          throw err;
        },
      );
      this.pending.set(file, p);
    }
    return p;
  }

  private put(file: string, buf: Buffer): void {
    if (buf.length > this.budget || this.map.has(file)) return;
    this.map.set(file, buf);
    this.bytes += buf.length;
    for (const [k, v] of this.map) {
      if (this.bytes <= this.budget) break;
      this.map.delete(k);
      this.bytes -= v.length;
    }
  }
}
