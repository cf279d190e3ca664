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
