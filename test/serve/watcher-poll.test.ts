import { afterEach, describe, expect, it, vi } from 'vitest';
import { pollTogether } from '../../src/serve/watcher.js';

/**
 * Every open site of a library polls its pointer file. One timer a site woke the process 250
 * times a second for 500 sites (3.7 % of a core, idle); the polls of one interval now share one
 * timer, so they run in one wake-up.
 */
describe('pollTogether', () => {
  afterEach(() => vi.restoreAllMocks());

  it('polls of one interval run on one timer, in one tick; another interval has its own; the last stop clears it', async () => {
    const intervals = vi.spyOn(globalThis, 'setInterval');
    const clears = vi.spyOn(globalThis, 'clearInterval');
    const ticks: string[][] = [];
    let tick: string[] = [];
    const ran = (name: string) => () => {
      if (tick.length === 0) queueMicrotask(() => (ticks.push(tick), (tick = [])));
      tick.push(name);
    };
    const stops = ['a', 'b', 'c'].map((n) => pollTogether(5, ran(n)));
    const other = pollTogether(7, () => {});
    expect(intervals).toHaveBeenCalledTimes(2);
    const by = Date.now() + 5_000;
    while (!ticks.some((t) => t.length === 3) && Date.now() < by) await new Promise((r) => setTimeout(r, 5));
    expect(ticks.find((t) => t.length === 3)?.sort()).toEqual(['a', 'b', 'c']);
    stops[0]!();
    stops[0]!(); // a second stop changes nothing
    stops[1]!();
    expect(clears).not.toHaveBeenCalled();
    stops[2]!();
    expect(clears).toHaveBeenCalledTimes(1);
    other();
    expect(clears).toHaveBeenCalledTimes(2);
    const again = pollTogether(5, () => {}); // a new timer for an interval whose polls all stopped
    expect(intervals).toHaveBeenCalledTimes(3);
    again();
  });
});
