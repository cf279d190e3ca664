import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (o: { type: 'minor' | 'major' }) => void;

/**
 * A young-generation collection, or nothing when the runtime does not offer one. Why: every
 * socket read and every inflated chunk is a fresh buffer whose memory lives outside the JS heap;
 * the small objects wrapping them are so cheap that V8 only collects them once its young
 * generation (up to 3 x 16 MB semi-spaces) is full, and their buffers pile up meanwhile. Code that
 * streams gigabytes calls this every few MiB, which frees that memory early: a download every ring
 * slot (2 MiB; -10..-20 MB of peak RSS at 1 GB, bench/fetch.ts), an archive walk every 8 MiB of
 * entries (bench/import.ts). A scavenge of a young generation that is mostly garbage costs well
 * under a millisecond. `v8.setFlagsFromString('--max-semi-space-size')` at run time does not
 * shrink the heap (measured); `--expose-gc` set at run time exposes gc() to new contexts only; the
 * main context is unchanged.
 */
function load(): Gc | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('typeof gc === "function" ? gc : undefined');
    return typeof gc === 'function' ? (gc as Gc) : undefined;
  } catch {
    return undefined;
  }
}

const gc = load();

export function minorGc(): void {
  gc?.({ type: 'minor' });
}

/** A counter of bytes streamed that runs minorGc() every `every` bytes (8 MiB for an archive walk or a package copy). */
export function gcPacer(every = 8 * 1024 * 1024): (bytes: number) => void {
  let since = 0;
  return (bytes) => {
    if ((since += bytes) < every) return;
    since = 0;
    minorGc();
  };
}

/**
 * For a process that streams bulk data (import, fetch, pack, verify, delta): keep V8's young
 * generation at its initial size instead of letting it grow to 3 x 16 MB. Every chunk read,
 * inflated or hashed is garbage at once, and a small young generation is scavenged often enough
 * to free their buffers early; a grown one lets them pile up (external memory 50-70 MB at the
 * peak on Node 24). Unlike --max-semi-space-size, this flag is read when the heap would grow, so
 * it works when set at run time. Measured, in-process import of the real-export-shaped site
 * (4,017 files), peak RSS: Node 20 121-143 -> 105-110 MB, Node 24 138-159 -> 113-136 MB, with no
 * measurable change in time. Not for `serve`: its throughput was measured with the default heap.
 */
export function smallYoungGeneration(): void {
  try {
    setFlagsFromString('--semi-space-growth-factor=1');
  } catch {
    // a runtime without the flag: the default heap
  }
}
