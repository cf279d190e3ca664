/**
 * When extraction fails, no write may still be in flight once the promise rejects.
 * A site without index.html is refused after the last entry, when up to a pool of small files
 * is still being written: `rm -r` of the folder then failed with ENOTEMPTY and left files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mkdtemp } from 'node:fs/promises';
import * as tar from 'tar';
import { extractArchive } from '../../src/archive/index.js';
import { JobPool } from '../../src/util/pool.js';

let dir: string;
let noIndex: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-drain-'));
  const site = join(dir, 'site');
  await mkdir(join(site, 'p'), { recursive: true });
  await writeFile(join(site, 'robots.txt'), 'User-agent: *\n');
  for (let i = 0; i < 400; i++) await writeFile(join(site, 'p', `${i}.html`), `<p>${i}</p>`.repeat(20));
  noIndex = join(dir, 'no-index.tar.gz');
  await tar.c({ file: noIndex, cwd: site, gzip: true, portable: true }, ['robots.txt', 'p']);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('extraction that fails drains its writes first', () => {
  it('no index.html: AIRLOCK_NO_INDEX, and the partial tree can be removed at once (no ENOTEMPTY, no late file)', async () => {
    for (let round = 0; round < 2; round++) {
      const dest = join(dir, `out-${round}`);
      await expect(extractArchive({ path: noIndex }, dest)).rejects.toMatchObject({ code: 'AIRLOCK_NO_INDEX', exitCode: 4 });
      await rm(dest, { recursive: true }); // throws ENOTEMPTY if a write lands meanwhile
      await sleep(50);
      expect(await readdir(dir)).not.toContain(`out-${round}`); // nothing re-created it
    }
  });
});

describe('JobPool', () => {
  it('the first failure drops the jobs not yet started, and drain() rethrows it', async () => {
    const pool = new JobPool(1, 1 << 20);
    const ran: number[] = [];
    await pool.submit(async () => {
      await sleep(10);
      throw new Error('disk full');
    }, 0);
    for (let i = 0; i < 5; i++)
      await pool
        .submit(async () => {
          ran.push(i);
        }, 0)
        .catch(() => {});
    await expect(pool.drain()).rejects.toThrow('disk full');
    expect(ran).toEqual([]);
  });

  it('cancel() drops the queue and waits for running jobs to end', async () => {
    const pool = new JobPool(2, 1 << 20);
    let running = 0;
    let started = 0;
    const job = async () => {
      started++;
      running++;
      await sleep(30);
      running--;
    };
    for (let i = 0; i < 10; i++) void pool.submit(job, 0);
    await pool.cancel();
    expect(running).toBe(0);
    expect(started).toBe(2); // only the two that were running
  });

  it('submit() waits while more than maxQueued jobs are queued (memory stays flat for empty files)', async () => {
    const pool = new JobPool(1, 1 << 30, 4);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await pool.submit(() => gate, 0);
    for (let i = 0; i < 4; i++) await pool.submit(async () => {}, 0);
    let fifth = false;
    const p = pool.submit(async () => {}, 0).then(() => (fifth = true));
    await sleep(20);
    expect(fifth).toBe(false);
    release();
    await p;
    await pool.drain();
  });
});
