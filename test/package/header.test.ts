import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BLOCK, decodeHeader, encodeHeader, parseNumeric } from '../../src/package/tar-header.js';
import { readPackage } from '../../src/package/reader.js';
import { verifyPackage } from '../../src/package/verify.js';
import { makePackage } from '../helpers/make-package.js';
import { base256, reseal } from './craft.js';

/** Every numeric field of a package's tar headers is bounded; none escapes as a code-less exit 1. */

const FIELDS: Array<[string, number, number]> = [
  ['mode', 100, 8],
  ['uid', 108, 8],
  ['gid', 116, 8],
  ['size', 124, 12],
  ['mtime', 136, 12],
  ['devmajor', 329, 8],
  ['devminor', 337, 8],
];
const header = () => encodeHeader('airlock.json', 1234, new Date('2025-01-15T12:00:00Z'));
const withField = (at: number, field: Buffer) => {
  const h = header();
  field.copy(h, at);
  return reseal(h);
};

describe('parseNumeric', () => {
  it('reads octal (space/NUL padded, empty = 0) and base-256 below 2^53', () => {
    expect(parseNumeric(Buffer.from('00000002322\0'))).toBe(1234);
    expect(parseNumeric(Buffer.from(' 1234 \0\0'))).toBe(0o1234);
    expect(parseNumeric(Buffer.alloc(8))).toBe(0);
    expect(parseNumeric(base256(2n ** 40n, 12))).toBe(2 ** 40);
    expect(parseNumeric(base256(BigInt(Number.MAX_SAFE_INTEGER), 12))).toBe(Number.MAX_SAFE_INTEGER);
  });
  it('refuses base-256 at 2^53 and beyond, negative base-256, and stray characters', () => {
    expect(parseNumeric(base256(2n ** 53n, 12))).toBeNull();
    expect(parseNumeric(base256(2n ** 88n - 1n, 12))).toBeNull();
    expect(parseNumeric(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]))).toBeNull();
    expect(parseNumeric(Buffer.from('0000009\0'))).toBeNull();
    expect(parseNumeric(Buffer.from('12x4\0\0\0\0'))).toBeNull();
    expect(parseNumeric(Buffer.from([0xc1, 0, 0, 0, 0, 0, 0, 0]))).toBeNull();
  });
});

describe('decodeHeader: numeric fields', () => {
  it('an honest header decodes, and base-256 ids below 2^53 are accepted (GNU tar writes big uids so)', () => {
    expect(decodeHeader(header(), 0, 'airlock.json')).toEqual({ name: 'airlock.json', size: 1234 });
    expect(decodeHeader(withField(108, base256(2n ** 40n, 8)), 0, 'airlock.json').size).toBe(1234);
  });
  it.each(FIELDS)('base-256 %s of 2^53 or more: exit 4 AIRLOCK_PACKAGE_HEADER naming the member and the field', (field, at, width) => {
    for (const value of [2n ** 53n, 2n ** BigInt(8 * (width - 1)) - 1n]) {
      expect(() => decodeHeader(withField(at, base256(value, width)), 0, 'airlock.json')).toThrow(
        expect.objectContaining({
          exitCode: 4,
          code: 'AIRLOCK_PACKAGE_HEADER',
          details: expect.objectContaining({ subject: 'airlock.json', field }),
        }),
      );
    }
  });
  it.each(FIELDS)('%s with characters that are not octal digits: exit 4 naming the field', (field, at, width) => {
    expect(() => decodeHeader(withField(at, Buffer.from('9'.repeat(width - 1) + '\0')), 0, 'airlock.json')).toThrow(
      expect.objectContaining({ exitCode: 4, code: 'AIRLOCK_PACKAGE_HEADER', details: expect.objectContaining({ field }) }),
    );
  });
  it('a size that passes 2^53 once padded to blocks is refused too', () => {
    expect(() => decodeHeader(withField(124, base256(BigInt(Number.MAX_SAFE_INTEGER), 12)), 0, 'airlock.json')).toThrow(
      expect.objectContaining({ code: 'AIRLOCK_PACKAGE_HEADER' }),
    );
  });
});

describe('readPackage / verifyPackage on a header with a huge base-256 size', () => {
  let dir: string;
  let good: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-header-'));
    good = (await makePackage({ outDir: dir })).pkgPath;
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['airlock.json', 0],
    ['bundle.tar.gz', 1],
  ])('base-256 size 2^54 on %s: exit 4 naming it (was "parsed number outside of javascript safe integer range", exit 1)', async (member, index) => {
    const bytes = await readFile(good);
    const at = index === 0 ? 0 : (await readPackage(good)).archive.offset - BLOCK;
    const h = Buffer.from(bytes.subarray(at, at + BLOCK));
    base256(2n ** 54n, 12).copy(h, 124);
    reseal(h).copy(bytes, at);
    const p = join(dir, `b256-${index}.airlock`);
    await writeFile(p, bytes);
    const want = expect.objectContaining({ exitCode: 4, code: 'AIRLOCK_PACKAGE_HEADER', details: expect.objectContaining({ subject: member, field: 'size' }) });
    await expect(readPackage(p)).rejects.toThrow(want);
    await expect(verifyPackage(p, { trust: [], allowUnsigned: true })).rejects.toThrow(want);
  });
});
