import { describe, expect, it } from 'vitest';
import { JobPool } from '../../src/util/pool.js';

/** The JobPool's scheduling (src/util/pool.ts) with gated jobs: order, the start rule, moving a job ahead, dropping. */
function gated() {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const job = (name: string) => () =>
    new Promise<void>((resolve) => {
      started.push(name);
      gates.set(name, resolve);
    });
  const tick = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  const finish = async (name: string) => {
    gates.get(name)!();
    await tick();
  };
  return { started, job, tick, finish };
}

describe('JobPool', () => {
  it('runs at most `concurrency` jobs, in queue order, and a front job goes before the waiting ones', async () => {
    const g = gated();
    const pool = new JobPool(1, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
    for (const n of ['a', 'b']) await pool.submit(g.job(n), 0);
    await pool.submit(g.job('u'), 0, { front: true });
    expect(g.started).toEqual(['a']);
    expect(pool.active).toBe(1);
    expect(pool.waiting).toBe(2);
    await g.finish('a');
    await g.finish('u');
    await g.finish('b');
    await pool.drain();
    expect(g.started).toEqual(['a', 'u', 'b']);
  });

  it('the start rule holds the head back until reconsider(); moveToFront() updates the tag and starts it', async () => {
    const g = gated();
    let open = false;
    const pool = new JobPool<{ name: string; urgent: boolean }>(2, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, (t) => open || t!.urgent);
    for (const name of ['b1', 'b2']) await pool.submit(g.job(name), 0, { tag: { name, urgent: false } });
    await g.tick();
    expect(g.started).toEqual([]);
    expect(
      pool.moveToFront(
        (t) => t!.name === 'b2',
        (t) => void (t!.urgent = true),
      ),
    ).toBe(true);
    expect(pool.moveToFront((t) => t!.name === 'nope')).toBe(false);
    expect(g.started).toEqual(['b2']);
    open = true;
    pool.reconsider();
    expect(g.started).toEqual(['b2', 'b1']);
    await g.finish('b1');
    await g.finish('b2');
    await pool.drain();
  });

  it('dropQueued() tells each job not started why, and leaves the running ones be', async () => {
    const g = gated();
    const pool = new JobPool(1, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
    const dropped: unknown[] = [];
    for (const n of ['a', 'b', 'c']) await pool.submit(g.job(n), 0, { onDrop: (why) => dropped.push([n, why]) });
    pool.dropQueued('stopped');
    expect(dropped).toEqual([
      ['b', 'stopped'],
      ['c', 'stopped'],
    ]);
    expect(pool.waiting).toBe(0);
    await g.finish('a');
    await pool.drain();
    expect(g.started).toEqual(['a']);
  });

  it('the first failure drops what has not started (telling it the failure) and is rethrown by drain()', async () => {
    const pool = new JobPool(1, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
    const dropped: unknown[] = [];
    const ran: string[] = [];
    let fail!: () => void;
    await pool.submit(
      () =>
        new Promise<void>((_, reject) => {
          ran.push('a');
          fail = () => reject(new Error('disk full'));
        }),
      0,
    );
    await pool.submit(async () => void ran.push('b'), 0, { onDrop: (why) => dropped.push(why) });
    fail();
    await expect(pool.drain()).rejects.toThrow('disk full');
    expect(ran).toEqual(['a']);
    expect(dropped).toEqual([new Error('disk full')]);
    await expect(pool.submit(async () => {}, 0)).rejects.toThrow('disk full');
  });
});
