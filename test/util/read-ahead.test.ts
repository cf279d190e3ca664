import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ReadAhead, readUpTo } from '../../src/util/read-ahead.js';

let dir: string;
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-read-ahead-'));
  for (let i = 0; i < 10; i++) await writeFile(file(`f${i}`), `file ${i} `.repeat(i + 1));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readUpTo', () => {
  it('reads at most max bytes: a file that grew past its listed size shows one byte more, never the rest', async () => {
    await writeFile(file('grown'), 'x'.repeat(100_000));
    expect((await readUpTo(file('grown'), 11)).length).toBe(11);
    expect((await readUpTo(file('f0'), 100)).toString()).toBe('file 0 ');
  });

  it('a file read up to its listed size + 1 comes back whole, small or large (it stops at the first short read)', async () => {
    for (const size of [0, 1, 4096, 64 * 1024 + 3, 9 * 1024 * 1024 + 7]) {
      const bytes = Buffer.alloc(size);
      for (let i = 0; i < size; i += 4093) bytes[i] = (i / 4093) & 0xff;
      await writeFile(file(`sized-${size}`), bytes);
      expect((await readUpTo(file(`sized-${size}`), size + 1)).equals(bytes)).toBe(true);
      expect((await readUpTo(file(`sized-${size}`), size + 1, false)).equals(bytes)).toBe(true);
    }
  });

  it('a FIFO where a file should be (a store edited by hand) reads as empty at once instead of hanging the import', async () => {
    expect(spawnSync('mkfifo', [file('fifo')]).status).toBe(0);
    // In a child with a time limit: a blocking open would hang this test process for good.
    const script = file('read-fifo.mjs');
    await writeFile(
      script,
      `const m = await import(${JSON.stringify(fileURLToPath(new URL('../../src/util/read-ahead.ts', import.meta.url)))});\nconst b = await m.readUpTo(${JSON.stringify(file('fifo'))}, 100);\nprocess.exit(b.length === 0 ? 0 : 3);\n`,
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', script], { timeout: 15_000, encoding: 'utf8' });
    expect(r.signal, 'readUpTo blocked on the FIFO').toBeNull();
    expect(r.status, r.stderr).toBe(0);
  });
});

describe('ReadAhead', () => {
  it('hands out each file in list order with its size + 1 bytes at most, however small the window', async () => {
    const list = Array.from({ length: 10 }, (_, i) => ({ path: file(`f${i}`), size: `file ${i} `.length * (i + 1) }));
    for (const limit of [
      { files: 1, bytes: 0 },
      { files: 3, bytes: 20 },
      { files: 32, bytes: 1 << 20 },
      { files: 4, bytes: 1 << 20, blocking: false },
    ]) {
      const ahead = new ReadAhead(list, limit);
      for (const [i, f] of list.entries()) expect((await ahead.take(f.path, f.size)).toString()).toBe(`file ${i} `.repeat(i + 1));
      await ahead.settle();
    }
  });

  it('a file asked for out of order is read on its own (right bytes), and the list goes on', async () => {
    const list = [0, 1, 2].map((i) => ({ path: file(`f${i}`), size: 7 * (i + 1) }));
    const ahead = new ReadAhead(list, { files: 2, bytes: 1 << 20 });
    expect((await ahead.take(file('f2'), 21)).toString()).toBe('file 2 '.repeat(3));
    expect((await ahead.take(file('f0'), 7)).toString()).toBe('file 0 ');
    await ahead.settle();
  });

  it('a read that fails ahead of its turn rejects its own take, and one nobody takes is never an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const list = [
        { path: file('f0'), size: 7 },
        { path: file('missing-1'), size: 5 },
        { path: file('missing-2'), size: 5 },
      ];
      const ahead = new ReadAhead(list, { files: 3, bytes: 1 << 20 });
      expect((await ahead.take(file('f0'), 7)).toString()).toBe('file 0 ');
      await expect(ahead.take(file('missing-1'), 5)).rejects.toMatchObject({ code: 'ENOENT' });
      await new Promise((r) => setTimeout(r, 50)); // missing-2 has failed by now, untaken
      await ahead.settle();
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
