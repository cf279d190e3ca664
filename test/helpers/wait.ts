/**
 * The one bounded wait of the tests: `until(fn)` calls `fn` every `intervalMs` until it returns a
 * value that is not `undefined`, `null` or `false`, and resolves with that value; it rejects once
 * `timeoutMs` have passed (or when `fn` throws a `Stop`, for a condition that can no longer come).
 * For a plain assertion that must come true, tests use vitest's `vi.waitFor` instead.
 */
export interface UntilOptions {
  timeoutMs: number;
  intervalMs?: number;
  what?: string | (() => string);
}

/** Thrown from an `until` callback: stop waiting now, with this error. */
export class Stop extends Error {}

export async function until<T>(fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, o: UntilOptions): Promise<T> {
  const end = Date.now() + o.timeoutMs;
  for (;;) {
    let v: T | undefined | null | false;
    try {
      v = await fn();
    } catch (e) {
      if (e instanceof Stop) throw new Error(e.message);
      throw e;
    }
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() >= end) throw new Error(`${typeof o.what === 'function' ? o.what() : (o.what ?? 'condition')} not met within ${o.timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 10));
  }
}
