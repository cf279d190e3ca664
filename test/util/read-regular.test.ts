import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRegularFile, readRegularFileIfExists, readRegularFileSync } from '../../src/util/fsx.js';

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

describe('readRegularFileSync: the same rules on a thread that may block', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-rrs-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const noFollow = { ...rule, noFollow: true };

  it('reads a regular file whole; refuses a FIFO at once, a device, a folder and a file over the limit, in words', () => {
    writeFileSync(join(dir, 'a'), 'hello');
    expect(readRegularFileSync(join(dir, 'a'), noFollow).toString()).toBe('hello');
    execFileSync('mkfifo', [join(dir, 'p')]);
    expect(() => readRegularFileSync(join(dir, 'p'), noFollow)).toThrow('F is a FIFO (named pipe), not a regular file');
    expect(() => readRegularFileSync('/dev/zero', noFollow)).toThrow('F is a character device, not a regular file');
    mkdirSync(join(dir, 'd'));
    expect(() => readRegularFileSync(join(dir, 'd'), noFollow)).toThrow('F is a folder, not a regular file');
    writeFileSync(join(dir, 'big'), 'x'.repeat(17));
    expect(() => readRegularFileSync(join(dir, 'big'), noFollow)).toThrow('F is 17 bytes, more than the limit of 16');
    expect(() => readRegularFileSync(join(dir, 'none'), noFollow)).toThrow('F does not exist');
  });

  it('a page swapped for a symbolic link to a file outside (/etc/passwd) is refused, not followed, when noFollow', () => {
    symlinkSync('/etc/passwd', join(dir, 'page.html'));
    expect(() => readRegularFileSync(join(dir, 'page.html'), noFollow)).toThrow('F is a symbolic link, not a regular file: it is not followed');
    expect(readRegularFileSync(join(dir, 'page.html'), { ...rule, maxBytes: 1 << 20 }).length).toBeGreaterThan(0); // followed only when allowed
  });
});
