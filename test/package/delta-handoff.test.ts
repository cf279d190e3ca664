import { describe, expect, it } from 'vitest';
import { Handoff } from '../../src/package/delta/handoff.js';

/**
 * The hand-over between the delta rebuild and the canonical package writer running beside it
 * (src/package/delta/handoff.ts): the writer never hangs, never gets bytes twice, and holds no
 * more than its budget.
 */
const settled = async (p: Promise<unknown>) => Promise.race([p.then((v) => ({ v }), (e: unknown) => ({ e })), new Promise((r) => setTimeout(() => r('pending'), 20))]);

describe('delta handoff', () => {
  it('a file the rebuild produces is taken once it is given: at once when given first, or when the writer already waits', async () => {
    const h = new Handoff(new Set(['a.html', 'b.html']), 1 << 20);
    h.give('a.html', { bytes: Buffer.from('A') });
    expect(String((await h.take('a.html'))?.bytes)).toBe('A');
    const b = h.take('b.html');
    expect(await settled(b)).toBe('pending');
    h.give('b.html', { bytes: Buffer.from('B') });
    expect(String((await b)?.bytes)).toBe('B');
  });

  it("a file taken from the base is read from the disk, and only once the rebuild has linked the base's files", async () => {
    const h = new Handoff(new Set(['a.html']), 1 << 20);
    const base = h.take('logo.svg');
    expect(await settled(base)).toBe('pending');
    h.linked();
    expect(await base).toBeNull();
  });

  it('bytes beyond the budget are not held: the writer reads those files from the disk', async () => {
    const h = new Handoff(new Set(['a', 'b', 'c']), 15);
    h.give('a', { bytes: Buffer.alloc(10, 1) });
    h.give('b', { bytes: Buffer.alloc(10, 2) }); // 20 > 15: not held
    expect((await h.take('a'))?.bytes.length).toBe(10);
    expect(await h.take('b')).toBeNull();
    h.give('c', { bytes: Buffer.alloc(10, 3) }); // 'a' was taken: room again
    expect((await h.take('c'))?.bytes.length).toBe(10);
  });

  it('a rebuild that fails fails every wait with its error: no writer is left hanging', async () => {
    const h = new Handoff(new Set(['a.html']), 1 << 20);
    const produced = h.take('a.html');
    const base = h.take('logo.svg');
    const err = new Error('patch does not apply');
    h.fail(err);
    await expect(produced).rejects.toBe(err);
    await expect(base).rejects.toBe(err);
    await expect(h.take('a.html')).rejects.toBe(err);
  });

  it('a rebuild that ends without giving a file turns the wait into a read of the disk (where its check then fails)', async () => {
    const h = new Handoff(new Set(['a.html', 'never.html']), 1 << 20);
    const waiting = h.take('never.html');
    h.done();
    expect(await waiting).toBeNull();
    expect(await h.take('logo.svg')).toBeNull();
  });
});
