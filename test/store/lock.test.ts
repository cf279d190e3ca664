import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, rm, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireLock, withLock } from '../../src/store/lock.js';
import { makeTempDir } from './helpers.js';

const HOLDER = fileURLToPath(new URL('./fixtures/hold-lock.ts', import.meta.url));
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function holdInChild(store: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, store], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('child did not take the lock in time')), 15_000);
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && (clearTimeout(t), resolve()));
    child.on('exit', (code) => reject(new Error(`holder exited early (${code})`)));
  });
  return child;
}

/** A pid that certainly belonged to a process that is now dead. */
async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => c.on('exit', r));
  return c.pid!;
}

/** Eight concurrent holders of the store lock, each inside for `holdMs`: how many were ever inside at once. */
async function mostInside(store: string, holdMs: number): Promise<number> {
  let inside = 0;
  let maxInside = 0;
  await Promise.all(
    Array.from({ length: 8 }, () =>
      withLock(store, async () => {
        maxInside = Math.max(maxInside, ++inside);
        await new Promise((r) => setTimeout(r, holdMs)); // time inside the lock, not a wait for a condition
        inside--;
      }),
    ),
  );
  return maxInside;
}

describe('store lock', () => {
  it('serialises holders: concurrent critical sections never overlap', async () => {
    const store = await makeTempDir();
    dirs.push(store);
    expect(await mostInside(store, 5)).toBe(1);
    await expect(readdir(store)).resolves.toEqual([]); // released, no temp files left
  });

  it('a live holder makes others wait, then fail with AIRLOCK_STORE_LOCKED naming its pid', async () => {
    const store = await makeTempDir();
    dirs.push(store);
    const child = await holdInChild(store);
    const err = await acquireLock(store, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AIRLOCK_STORE_LOCKED', exitCode: 1 });
    expect((err as Error).message).toContain(String(child.pid));
  });

  it('a lock left by a SIGKILLed process is taken over', async () => {
    const store = await makeTempDir();
    dirs.push(store);
    const child = await holdInChild(store);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    expect(JSON.parse(await readFile(join(store, 'lock'), 'utf8')).pid).toBe(child.pid); // still on disk
    const lock = await acquireLock(store, { timeoutMs: 2000 });
    expect(JSON.parse(await readFile(join(store, 'lock'), 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it('several takers of one dead lock: only one holds at a time (rounds of 8 racing takers)', async () => {
    const store = await makeTempDir();
    dirs.push(store);
    const pid = await deadPid();
    for (let round = 0; round < 5; round++) {
      await writeFile(join(store, 'lock'), JSON.stringify({ pid, start: '1', nonce: `dead-${round}`, since: 'then' }));
      expect(await mostInside(store, 2)).toBe(1);
    }
    await expect(readdir(store)).resolves.toEqual([]);
  });

  it("a pid reused by another process does not keep a dead holder's lock (start marker differs)", async () => {
    const store = await makeTempDir();
    dirs.push(store);
    // Our own (live) pid, but a start marker from a different process lifetime.
    await writeFile(join(store, 'lock'), JSON.stringify({ pid: process.pid, start: 'not-our-start', nonce: 'x', since: 'then' }));
    const lock = await acquireLock(store, { timeoutMs: 1000 });
    await lock.assertHeld();
    await lock.release();
  });
});
