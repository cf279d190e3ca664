import { afterEach, describe, expect, it, vi } from 'vitest';
import { pollTogether } from '../../src/serve/watcher.js';

/**
 * Every open site of a library polls its pointer file. One timer a site woke the process 250
 * times a second for 500 sites (3.7 % of a core, idle); the polls of one interval now share one
 * timer and run in rounds, a few at a time, so that a round never fills libuv's threadpool.
 */
describe('pollTogether', () => {
  afterEach(() => vi.restoreAllMocks());

  it('polls of one interval run on one timer, in one tick; another interval has its own; the last stop clears it', async () => {
    const timers = new Map<number, () => void>(); // each interval's timer, fired by hand
    const intervals = vi
      .spyOn(globalThis, 'setInterval')
      .mockImplementation(((fn: () => void, ms: number) => (timers.set(ms, fn), { unref: () => undefined })) as never);
    const clears = vi.spyOn(globalThis, 'clearInterval').mockImplementation(() => {});
    const ticks: string[][] = [];
    let tick: string[] = [];
    const ran = (name: string) => async () => {
      if (tick.length === 0) queueMicrotask(() => (ticks.push(tick), (tick = [])));
      tick.push(name);
    };
    const stops = ['a', 'b', 'c'].map((n) => pollTogether(5, ran(n)));
    const other = pollTogether(7, async () => {});
    expect(intervals).toHaveBeenCalledTimes(2);
    timers.get(5)!();
    await new Promise((r) => setImmediate(r));
    expect(ticks.find((t) => t.length === 3)?.sort()).toEqual(['a', 'b', 'c']);
    stops[0]!();
    stops[0]!(); // a second stop changes nothing
    stops[1]!();
    expect(clears).not.toHaveBeenCalled();
    stops[2]!();
    expect(clears).toHaveBeenCalledTimes(1);
    other();
    expect(clears).toHaveBeenCalledTimes(2);
    const again = pollTogether(5, async () => {}); // a new timer for an interval whose polls all stopped
    expect(intervals).toHaveBeenCalledTimes(3);
    again();
  });

  it('a round polls a few sites at a time, skips a poll stopped meanwhile, and is not started again while still going (a file system that hangs)', async () => {
    let tick: (() => void) | undefined; // the shared timer, fired by hand
    vi.spyOn(globalThis, 'setInterval').mockImplementation(((fn: () => void) => ((tick = fn), { unref: () => undefined })) as never);
    vi.spyOn(globalThis, 'clearInterval').mockImplementation(() => {});
    const settle = () => new Promise((r) => setImmediate(r)); // every promise the releases set going has moved on
    const held: Array<() => void> = [];
    const started = new Array<number>(20).fill(0);
    let inFlight = 0;
    let most = 0;
    const stops = started.map((_, i) =>
      pollTogether(3, () => {
        started[i]!++;
        most = Math.max(most, ++inFlight);
        return new Promise<void>((resolve) => held.push(() => (inFlight--, resolve())));
      }),
    );
    tick!();
    await settle();
    expect([held.length, most]).toEqual([8, 8]);
    for (let i = 0; i < 10; i++) tick!(); // ten intervals more: the round is still going
    await settle();
    expect([held.length, most]).toEqual([8, 8]);
    stops[15]!(); // its site closed while the round waits: the round does not poll it
    while (held.length > 0) {
      held.splice(0).forEach((release) => release());
      await settle();
    }
    const due = (n: number, i: number) => i === 15 || n > 0;
    expect(started.every(due)).toBe(true);
    expect(started[15]).toBe(0);
    expect(started.reduce((a, n) => a + n, 0)).toBe(19); // one round, each poll once: the ticks during it started no other
    expect(most).toBe(8);
    stops.forEach((stop) => stop());
  });
});
