import { createHook } from 'node:async_hooks';
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

let tickHeld: object | undefined;

/**
 * For a server, once: hold one entry of Node's own `process.nextTick` queue for the life of the
 * process. Why: V8 forgets an object shape (its hidden class) at a full garbage collection that
 * finds no object of that shape alive. A server between requests has no tick queued, so a full
 * collection in a quiet moment drops the shape of Node's tick entries; the next entries get a new
 * one, and after a few such collections the code that builds them (inlined into every stream and
 * HTTP write) goes to V8's slow generic path for the rest of the process's life. Measured on a hot
 * 10 KB page (bench/library.ts, one core): 28-36 k requests a second in that state against 46-50 k,
 * and a library that opens 50 sites runs enough collections to get there almost every time; a
 * store served alone gets there later, after enough quiet moments. One entry held keeps the shape,
 * so the fast path stays. The entry is taken with an async hook enabled for one `nextTick` call.
 * Returns the entry held.
 */
export function holdTickShape(): object | undefined {
  if (tickHeld !== undefined) return tickHeld;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'TickObject') tickHeld ??= resource;
    },
  }).enable();
  try {
    process.nextTick(() => {});
  } finally {
    hook.disable();
  }
  return tickHeld;
}
