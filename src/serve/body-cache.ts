import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { StoreError } from '../errors.js';
import { Flight, type DynamicCoding } from './compress-now.js';

/** A file whose bytes differ from the digest its index recorded (a torn or tampered cache file, or a site file changed in the store). */
export class DamagedFileError extends StoreError {
  constructor(file: string, why = 'does not match its recorded digest') {
    super('AIRLOCK_DAMAGED_CACHE_FILE', `${file} ${why}`, { subject: file });
  }
}

/**
 * Byte-bounded cache of small file bodies, keyed by absolute path (paths include the version
 * folder, so versions never share an entry). Memory stays near the budget whatever the site's
 * size; concurrent misses on one file share a single read. Eviction is CLOCK (second chance): a
 * hit only sets a bit, so the hot path never mutates the Map (a strict LRU's delete + set per hit
 * churns the hash table at 20k requests/s); eviction gives referenced entries one more round.
 */
interface Slot {
  buf: Buffer;
  ref: boolean;
}

export class BodyCache {
  private readonly map = new Map<string, Slot>();
  private readonly pending = new Map<string, Promise<Buffer>>();
  private readonly flights = new Map<string, Flight>();
  private bytes = 0;

  constructor(readonly budget: number) {}

  /**
   * A body compressed on request (compress-now.ts), under `key` (its digest and coding): from the
   * cache, or the one flight compressing it now (started if none). Bodies of sources up to a
   * quarter of the budget are kept; bigger ones are streamed to the readers of their flight only.
   * `peek` (HEAD): the cached body or null, never a new flight.
   */
  compressed(key: string, file: string, coding: DynamicCoding, size: number, peek = false, sha256: string | null = null): Buffer | Flight | null {
    const buf = this.get(key);
    if (buf !== undefined) return buf;
    if (peek) return null;
    let f = this.flights.get(key);
    if (f === undefined) {
      f = new Flight(
        file,
        coding,
        size,
        size <= this.budget / 4,
        (body) => {
          this.flights.delete(key);
          if (body !== null) this.put(key, body);
        },
        sha256,
      );
      this.flights.set(key, f);
    }
    return f;
  }

  get size(): number {
    return this.bytes;
  }

  get(file: string): Buffer | undefined {
    const slot = this.map.get(file);
    if (slot === undefined) return undefined;
    slot.ref = true;
    return slot.buf;
  }

  /**
   * Read into the cache. Bytes of another size than `size`, or (with `sha256`) another digest, are
   * refused and never cached: a later reader must not be served what the first was refused.
   */
  load(file: string, sha256: string | null = null, size: number | null = null): Promise<Buffer> {
    let p = this.pending.get(file);
    if (!p) {
      p = readFile(file).then(
        (buf) => {
          this.pending.delete(file);
          if (size !== null && buf.length !== size) throw new DamagedFileError(file, `is ${buf.length} bytes, not the ${size} its index records`);
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

  /**
   * Drop every body read from under `dir`, and every body compressed on request (keyed by digest,
   * it may have been compressed from there): a version folder was found replaced, and nothing read
   * through it is kept.
   */
  forget(dir: string): void {
    const under = dir + '/';
    for (const [k, slot] of this.map) {
      if (!k.startsWith(under) && !k.startsWith('\0')) continue;
      this.map.delete(k);
      this.bytes -= slot.buf.length;
    }
  }

  private put(file: string, buf: Buffer): void {
    if (buf.length > this.budget || this.map.has(file)) return;
    this.map.set(file, { buf, ref: false });
    this.bytes += buf.length;
    // Map order is insertion order: the front is the oldest. A referenced entry there loses its
    // bit and moves to the back; the first unreferenced one is evicted. Each entry moves at most
    // once per pass, so this ends (the new entry is unreferenced and last).
    while (this.bytes > this.budget) {
      const [k, slot] = this.map.entries().next().value as [string, Slot];
      this.map.delete(k);
      if (slot.ref && k !== file) {
        slot.ref = false;
        this.map.set(k, slot);
      } else {
        this.bytes -= slot.buf.length;
      }
    }
  }
}
