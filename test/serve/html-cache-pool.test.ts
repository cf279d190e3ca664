import { describe, expect, it } from 'vitest';
import { MAX_RESPAWNS, PageWorkers, type PageSlot } from '../../src/serve/html-cache/pool.js';
import type { PageJob } from '../../src/serve/html-cache/page.js';
import type { TransformContext } from '../../src/features/index.js';

/**
 * The page queue's scheduling (src/serve/html-cache/pool.ts) with fake slots: which page runs when,
 * how many workers start and that every one of them ends.
 */
function harness(size: number) {
  const gates = new Map<string, () => void>();
  const started: string[] = [];
  let spawned = 0;
  let ended = 0;
  const slot = (): PageSlot => {
    spawned++;
    return {
      run: (job) =>
        new Promise((resolve) => {
          started.push(job.path);
          gates.set(job.path, () => resolve({ sha256: job.sha256, size: 1, scriptHashes: [], styleHashes: [] }));
        }),
      end: async () => {
        ended++;
      },
    };
  };
  const pool = new PageWorkers(size, slot);
  const q = pool.queue();
  const job = (path: string): PageJob => ({ src: `/nowhere/${path}`, path, sha256: path.padEnd(64, '0'), dir: '/nowhere', digest: path.padEnd(64, '0') });
  const finish = async (path: string) => {
    gates.get(path)!();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  const tick = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return { pool, q, job, started, finish, tick, counts: () => ({ spawned, ended }) };
}

describe('HTML page queue', () => {
  it('the background build takes size − 1 workers; a page a reader waits for starts at once on the last one', async () => {
    const h = harness(2);
    const all = ['b1', 'b2', 'b3'].map((p) => h.q.submit(h.job(p), false));
    await h.tick();
    expect(h.started).toEqual(['b1']); // one background page at a time on 2 workers
    expect(h.counts()).toEqual({ spawned: 2, ended: 0 }); // the other one starts now, warm before a reader asks
    const urgent = h.q.submit(h.job('u1'), true);
    await h.tick();
    expect(h.started).toEqual(['b1', 'u1']); // not behind b1
    await h.finish('u1');
    await urgent;
    // The reader's worker has nothing it may take (b2 is the background's): parked, not ended.
    expect(h.counts()).toEqual({ spawned: 2, ended: 0 });
    const urgent2 = h.q.submit(h.job('u2'), true);
    await h.tick();
    expect(h.started).toEqual(['b1', 'u1', 'u2']);
    expect(h.counts().spawned).toBe(2); // the parked worker took it: no new worker to wait for
    await h.finish('u2');
    await urgent2;
    for (const p of ['b1', 'b2', 'b3']) await h.finish(p);
    await Promise.all(all);
    await h.tick();
    expect(h.started).toEqual(['b1', 'u1', 'u2', 'b2', 'b3']);
    expect(h.counts()).toEqual({ spawned: 2, ended: 2 }); // every worker ends once the queue is empty
  });

  it('with one worker the background build uses it, and a waited-for page jumps the queue', async () => {
    const h = harness(1);
    const all = ['b1', 'b2'].map((p) => h.q.submit(h.job(p), false));
    const urgent = h.q.submit(h.job('u1'), true);
    await h.tick();
    expect(h.started).toEqual(['b1']);
    await h.finish('b1');
    expect(h.started).toEqual(['b1', 'u1']);
    await h.finish('u1');
    await h.finish('b2');
    await Promise.all([...all, urgent]);
    await h.tick();
    expect(h.counts()).toEqual({ spawned: 1, ended: 1 });
  });

  it('a held queue runs only waited-for pages; dropping the rest ends the parked worker', async () => {
    const h = harness(2);
    h.q.hold();
    const background = h.q.submit(h.job('b1'), false);
    background.catch(() => {});
    const urgent = h.q.submit(h.job('u1'), true);
    await h.tick();
    expect(h.started).toEqual(['u1']);
    await h.finish('u1');
    await urgent;
    expect(h.counts()).toEqual({ spawned: 1, ended: 0 }); // b1 waits for release: the worker stays warm
    h.q.drop('the version was switched away from');
    await expect(background).rejects.toThrow(/b1: the version was switched away from/);
    await h.tick();
    expect(h.counts()).toEqual({ spawned: 1, ended: 1 });
  });

  it("one pool, two sites: never more than its workers, a page a reader of one waits for goes before the other site's background build, dropping one leaves the other", async () => {
    const h = harness(2);
    const other = h.pool.queue();
    const a = ['a1', 'a2', 'a3'].map((p) => h.q.submit(h.job(p), false));
    const b = ['b1', 'b2'].map((p) => other.submit(h.job(p), false));
    b.forEach((p) => p.catch(() => {}));
    await h.tick();
    expect(h.started).toEqual(['a1']);
    const urgent = other.submit(h.job('u1'), true);
    await h.tick();
    expect(h.started).toEqual(['a1', 'u1']);
    expect(h.counts().spawned).toBe(2);
    other.drop('the site was closed');
    await expect(b[0]).rejects.toThrow(/b1: the site was closed/);
    await h.finish('u1');
    await urgent;
    for (const p of ['a1', 'a2', 'a3']) await h.finish(p);
    await Promise.all(a);
    await h.tick();
    expect(h.started).toEqual(['a1', 'u1', 'a2', 'a3']);
    expect(h.counts()).toEqual({ spawned: 2, ended: 2 });
  });

  it("each page is built with its own queue's transform options", async () => {
    const seen: Array<[string, unknown]> = [];
    const pool = new PageWorkers(1, () => ({
      run: async (job, context) => {
        seen.push([job.path, context?.deployment]);
        return { sha256: job.sha256, size: 1, scriptHashes: [], styleHashes: [] };
      },
      end: async () => {},
    }));
    const job = (path: string): PageJob => ({ src: `/nowhere/${path}`, path, sha256: path.padEnd(64, '0'), dir: '/nowhere', digest: path.padEnd(64, '0') });
    const ctx = (deployment: 'cloud' | 'air-gapped') => ({ features: {}, deployment }) as unknown as TransformContext;
    await Promise.all([pool.queue(ctx('cloud')).submit(job('c'), false), pool.queue(ctx('air-gapped')).submit(job('g'), false)]);
    expect(seen).toEqual([
      ['c', 'cloud'],
      ['g', 'air-gapped'],
    ]);
  });

  /** Slots that behave like worker threads: one that has died rejects every page at once. */
  function mortal(diesOn: (path: string) => boolean) {
    let spawned = 0;
    let ended = 0;
    const ran: Array<[number, string]> = [];
    const slot = (): PageSlot => {
      const n = ++spawned;
      let dead = diesOn('(start)');
      return {
        run: async (job) => {
          ran.push([n, job.path]);
          if (dead) throw new Error(`transforming ${job.path}: HTML transform worker exited with code 1`);
          if (diesOn(job.path)) {
            dead = true;
            throw new Error(`transforming ${job.path}: HTML transform worker exited with code 134`);
          }
          return { sha256: job.sha256, size: 1, scriptHashes: [], styleHashes: [] };
        },
        end: async () => {
          ended++;
        },
        dead: () => dead,
      };
    };
    const job = (path: string): PageJob => ({ src: `/nowhere/${path}`, path, sha256: path.padEnd(64, '0'), dir: '/nowhere', digest: path.padEnd(64, '0') });
    return { slot, job, ran, counts: () => ({ spawned, ended }) };
  }
  const settle = async (ps: Array<Promise<unknown>>) => Promise.allSettled(ps).then((r) => r.map((x) => x.status));

  it('a worker that crashes fails only the page it was building; the pages after it run on a new worker', async () => {
    const m = mortal((path) => path === 'b2');
    const q = new PageWorkers(1, m.slot).queue();
    const pages = ['b1', 'b2', 'b3', 'b4'].map((p) => q.submit(m.job(p), false));
    expect(await settle(pages)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    await expect(pages[1]).rejects.toThrow(/b2: HTML transform worker exited with code 134/);
    expect(m.ran).toEqual([
      [1, 'b1'],
      [1, 'b2'],
      [2, 'b3'],
      [2, 'b4'],
    ]);
    await new Promise((r) => setImmediate(r));
    expect(m.counts()).toEqual({ spawned: 2, ended: 2 }); // the dead one ended too
  });

  it(`a worker that dies every time is replaced at most ${MAX_RESPAWNS} times; then each page fails at once, naming why`, async () => {
    const m = mortal(() => true); // dead before its first page: it cannot start here
    const q = new PageWorkers(2, m.slot).queue();
    const pages = Array.from({ length: 40 }, (_, i) => q.submit(m.job(`p${i}`), i % 5 === 0));
    expect(new Set(await settle(pages))).toEqual(new Set(['rejected']));
    await expect(pages[39]).rejects.toThrow(/p39: HTML transform worker exited/);
    await new Promise((r) => setImmediate(r));
    const { spawned, ended } = m.counts();
    expect(spawned).toBeLessThanOrEqual(2 + 1 + MAX_RESPAWNS); // two slots, the parked one, the replacements
    expect(ended).toBe(spawned);
  });
});
