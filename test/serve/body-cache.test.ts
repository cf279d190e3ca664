import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BodyCache, DamagedFileError } from '../../src/serve/body-cache.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-body-cache-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, size: number): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, Buffer.alloc(size, name));
  return p;
}

describe('BodyCache', () => {
  it('a body compressed on request from bytes other than its digest says: the flight ends in error, nothing is kept', async () => {
    const cache = new BodyCache(1 << 20);
    const p = await file('a.css', 4000);
    const expected = createHash('sha256').update(Buffer.alloc(4000, 'b')).digest('hex'); // another content of the same size
    const flight = cache.compressed('\0br:x', p, 'br', 4000, false, expected);
    const end = await new Promise<unknown>((resolve) =>
      (flight as { subscribe(l: (c: Buffer | null, e?: unknown) => void): void }).subscribe((c, e) => c === null && resolve(e)),
    );
    expect(end).toBeInstanceOf(DamagedFileError);
    expect(cache.get('\0br:x')).toBeUndefined();
    const right = createHash('sha256').update(Buffer.alloc(4000, 'a.css')).digest('hex');
    const ok = cache.compressed('\0br:y', p, 'br', 4000, false, right);
    await new Promise<void>((resolve) =>
      (ok as { subscribe(l: (c: Buffer | null, e?: unknown) => void): void }).subscribe((c, e) => c === null && e === undefined && resolve()),
    );
    expect(cache.get('\0br:y')).toBeDefined();
  });

  it('stays within its byte budget, evicting the oldest unreferenced bodies', async () => {
    const cache = new BodyCache(250);
    const [a, b, c] = [await file('a', 100), await file('b', 100), await file('c', 100)];
    await cache.load(a);
    await cache.load(b);
    await cache.load(c);
    expect(cache.size).toBeLessThanOrEqual(250);
    expect(cache.get(a)).toBeUndefined();
    expect(cache.get(b)?.length).toBe(100);
    expect(cache.get(c)?.length).toBe(100);
  });

  it('second chance: a body read since it was cached outlives an older unread one', async () => {
    const cache = new BodyCache(250);
    const [a, b, c] = [await file('a', 100), await file('b', 100), await file('c', 100)];
    await cache.load(a);
    await cache.load(b);
    expect(cache.get(a)).toBeDefined(); // a is the oldest but was just read
    await cache.load(c);
    expect(cache.get(a)).toBeDefined();
    expect(cache.get(b)).toBeUndefined();
    expect(cache.size).toBe(200);
  });

  it('a body larger than the budget is served but never cached', async () => {
    const cache = new BodyCache(50);
    const big = await file('big', 100);
    expect((await cache.load(big)).length).toBe(100);
    expect(cache.get(big)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('concurrent misses on one file share one read', async () => {
    const cache = new BodyCache(1000);
    const a = await file('a', 10);
    const [x, y] = [cache.load(a), cache.load(a)];
    expect(x).toBe(y);
    expect(await x).toBe(await y);
  });

  it('tampered cache file: bytes that differ from the recorded digest are refused and not cached', async () => {
    const cache = new BodyCache(1000);
    const a = await file('a', 10);
    const wrong = createHash('sha256').update('something else').digest('hex');
    await expect(cache.load(a, wrong)).rejects.toBeInstanceOf(DamagedFileError);
    expect(cache.get(a)).toBeUndefined();
    const right = createHash('sha256').update(Buffer.alloc(10, 'a')).digest('hex');
    expect((await cache.load(a, right)).length).toBe(10);
  });
});
