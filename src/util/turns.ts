/**
 * Work that takes turns: at most `n` run at once, the others wait in the order given; a failed
 * work does not stop the next. `waiting` says how many wait (a caller may refuse past a bound).
 */
export interface Turns {
  <T>(work: () => Promise<T>): Promise<T>;
  readonly waiting: number;
}

export function turns(n: number): Turns {
  let running = 0;
  const queue: Array<() => void> = [];
  const take = async <T>(work: () => Promise<T>): Promise<T> => {
    if (running >= n) await new Promise<void>((r) => queue.push(r));
    running++;
    try {
      return await work();
    } finally {
      running--;
      queue.shift()?.();
    }
  };
  return Object.defineProperty(take, 'waiting', { get: () => queue.length }) as Turns;
}
