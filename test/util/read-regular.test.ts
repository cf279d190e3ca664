import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRegularFile, readRegularFileIfExists } from '../../src/util/fsx.js';

const rule = { maxBytes: 16, refuse: (why: string) => new Error(`F ${why}`) };

describe('readRegularFile: only a regular file, bounded before reading', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-rr-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a small regular file whole', async () => {
    writeFileSync(join(dir, 'a'), 'hello');
    expect((await readRegularFile(join(dir, 'a'), rule)).toString()).toBe('hello');
  });
  it('a FIFO is refused at once, not waited on', async () => {
    execFileSync('mkfifo', [join(dir, 'p')]);
    await expect(readRegularFile(join(dir, 'p'), rule)).rejects.toThrow('F is a FIFO (named pipe), not a regular file');
  });
  it('a character device (/dev/zero) is refused without reading', async () => {
    await expect(readRegularFile('/dev/zero', rule)).rejects.toThrow('F is a character device, not a regular file');
  });
  it('a folder is refused in words', async () => {
    mkdirSync(join(dir, 'd'));
    await expect(readRegularFile(join(dir, 'd'), rule)).rejects.toThrow('F is a folder, not a regular file');
  });
  it('a symlink loop is refused in words, no ELOOP', async () => {
    symlinkSync('l2', join(dir, 'l1'));
    symlinkSync('l1', join(dir, 'l2'));
    await expect(readRegularFile(join(dir, 'l1'), rule)).rejects.toThrow('F is a loop of symbolic links');
  });
  it('a file over the limit is refused before reading', async () => {
    writeFileSync(join(dir, 'big'), 'x'.repeat(17));
    await expect(readRegularFile(join(dir, 'big'), rule)).rejects.toThrow('F is 17 bytes, more than the limit of 16');
  });
  it('a missing file: refused by readRegularFile, null from readRegularFileIfExists', async () => {
    await expect(readRegularFile(join(dir, 'none'), rule)).rejects.toThrow('F does not exist');
    expect(await readRegularFileIfExists(join(dir, 'none'), rule)).toBeNull();
  });
});
