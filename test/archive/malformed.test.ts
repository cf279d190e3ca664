import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { detectFormat, extractArchive, scanArchive } from '../../src/archive/index.js';
import { MalformedError, UnsafeArchiveError } from '../../src/errors.js';
import { siteFiles, tar, tgz, zip } from '../helpers/evil-archives.js';
import { expectRefusal, sandbox, type Sandbox } from './sandbox.js';

let sb: Sandbox;
beforeEach(async () => (sb = await sandbox()));
afterEach(() => sb.cleanup());

const big = { name: 'site/big.html', data: randomBytes(300_000).toString('hex') };

async function malformed(bytes: Buffer, code: string, subject: string | RegExp, name = 'bad') {
  const path = await sb.put(name, bytes);
  const before = await sb.outsideSnapshot();
  await expectRefusal(extractArchive({ path }, sb.dest), MalformedError, code, subject instanceof RegExp || subject !== '<path>' ? subject : path);
  expect(await sb.outsideSnapshot()).toEqual(before);
}

describe('truncated and random input', () => {
  it('truncated tar.gz (cut in the middle of an entry) is refused naming that entry', async () => {
    const full = tgz([...siteFiles('site/'), big]);
    await malformed(full.subarray(0, Math.floor(full.length / 2)), 'AIRLOCK_TRUNCATED', 'site/big.html');
  });
  it('truncated tar (cut in the middle of an entry body) is refused naming that entry', async () => {
    const full = tar([...siteFiles('site/'), big]);
    await malformed(full.subarray(0, full.length - 200_000), 'AIRLOCK_TRUNCATED', 'site/big.html');
  });
  it('tar cut exactly at an entry boundary (no end-of-archive blocks) is refused as truncated', async () => {
    await malformed(tar(siteFiles('site/'), { end: false }), 'AIRLOCK_TRUNCATED', /app\.3f2a\.js$/);
  });
  it('truncated zip (end records cut off) is refused naming the file', async () => {
    const full = zip([...siteFiles('site/'), big]);
    await malformed(full.subarray(0, full.length - 40), 'AIRLOCK_TRUNCATED', '<path>');
  });
  it('random bytes are refused as not an archive, naming the file', async () => {
    await malformed(randomBytes(4096), 'AIRLOCK_NOT_AN_ARCHIVE', '<path>');
  });
  it('empty file is refused as not an archive', async () => {
    await malformed(Buffer.alloc(0), 'AIRLOCK_NOT_AN_ARCHIVE', '<path>');
  });
  it('random bytes behind a gzip magic are refused as corrupt', async () => {
    const path = await sb.put('fake.tgz', Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), randomBytes(4096)]));
    const err = await scanArchive({ path }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MalformedError);
    // in words, not zlib's ("invalid block type", "incorrect header check", "invalid distance too far back")
    expect((err as Error).message).toMatch(/corrupt compressed data$|compressed data ends early \(truncated\)$/);
  });
  it('tar with a damaged header checksum is refused, not skipped', async () => {
    const t = tar([...siteFiles('site/'), { name: 'site/x.html', data: 'x' }]);
    t[3 * 1024 + 10] = t[3 * 1024 + 10]! ^ 0xff; // inside the 4th header's name
    const err = await scanArchive({ path: await sb.put('bad.tar', t) }).catch((e: unknown) => e);
    expect((err as { code: string }).code).toBe('AIRLOCK_CORRUPT');
  });
  it('file name does not decide the format: a zip named .tar.gz is read as zip', async () => {
    const r = await scanArchive({ path: await sb.put('lies.tar.gz', zip(siteFiles('site/'))) });
    expect(r.format).toBe('zip');
  });
  it('a declared format that disagrees with the magic bytes is refused', async () => {
    const path = await sb.put('x.zip', tgz(siteFiles()));
    await expectRefusal(scanArchive({ path }, { format: 'zip' }), MalformedError, 'AIRLOCK_NOT_AN_ARCHIVE', path);
  });
});

describe('no index.html', () => {
  const noIndex = [
    { name: 'site/a.html', data: 'a' },
    { name: 'site/b/index.html', data: 'b' },
  ];
  for (const [fmt, bytes] of [
    ['tar', tar(noIndex)],
    ['tar.gz', tgz(noIndex)],
    ['zip', zip(noIndex)],
  ] as const) {
    it(`a site without a root index.html (after stripping the wrapper) is refused (${fmt})`, async () => {
      await malformed(bytes, 'AIRLOCK_NO_INDEX', 'site/index.html');
    });
  }
  it('index.html inside the only folder of a site that also has a root file is not enough', async () => {
    await malformed(
      tar([
        { name: 'robots.txt', data: 'x' },
        { name: 'site/index.html', data: 'x' },
      ]),
      'AIRLOCK_NO_INDEX',
      'index.html',
    );
  });
});

describe('zip structure attacks', () => {
  const cases: [string, Parameters<typeof zip>[0][number], string][] = [
    ['local header names another file than the central directory', { name: 'site/a.html', data: 'a', localName: '../../evil.html' }, 'site/a.html'],
    ['local header compression method differs', { name: 'site/a.html', data: 'a', localMethod: 0 }, 'site/a.html'],
    ['local header size differs', { name: 'site/a.html', data: 'abc', localSize: 99 }, 'site/a.html'],
  ];
  for (const [title, evil, subject] of cases) {
    it(`zip: ${title} is refused`, () => malformed(zip([...siteFiles('site/'), evil]), 'AIRLOCK_CORRUPT', subject));
  }
  it('zip: data prepended before the first entry (offsets shifted) is refused', async () => {
    await malformed(zip(siteFiles('site/'), { prefix: Buffer.concat([Buffer.from([0x50, 0x4b, 3, 4]), Buffer.alloc(60, 0x41)]) }), 'AIRLOCK_CORRUPT', '<path>');
  });
  it('zip: Info-ZIP Unicode Path extra field naming another file is refused', async () => {
    const alt = Buffer.from('../../evil.html');
    const field = Buffer.concat([Buffer.from([0x75, 0x70]), Buffer.from([(alt.length + 5) & 0xff, 0]), Buffer.from([1, 0, 0, 0, 0]), alt]);
    const path = await sb.put('u.zip', zip([...siteFiles('site/'), { name: 'site/a.html', data: 'a', extra: field }]));
    await expectRefusal(scanArchive({ path }), UnsafeArchiveError, 'AIRLOCK_UNSAFE_PATH', 'site/a.html');
  });
  it('zip: encrypted entry is refused as unsupported', async () => {
    await malformed(zip([...siteFiles('site/'), { name: 'site/a.html', data: 'a', flags: 0x0801 }]), 'AIRLOCK_UNSUPPORTED', 'site/a.html');
  });
  it('zip: CRC mismatch (flipped data byte) is refused as corrupt', async () => {
    const z = zip([{ name: 'index.html', data: 'hello world', method: 0 }]);
    z[40] = z[40]! ^ 0x01; // first data byte: 30-byte header + 10-byte name
    await malformed(z, 'AIRLOCK_CORRUPT', 'index.html');
  });
  it('zip: name that is not UTF-8 is refused by name', async () => {
    const path = await sb.put('n.zip', zip([...siteFiles(), { name: Buffer.from([0x61, 0xff, 0x2e, 0x68]), data: 'x', flags: 0 }]));
    await expectRefusal(scanArchive({ path }), UnsafeArchiveError, 'AIRLOCK_UNSAFE_PATH', 'a\u00ff.h');
  });
});

describe('detectFormat', () => {
  it('recognises gzip, zip, empty zip, ustar and v7 tar by magic bytes', () => {
    expect(detectFormat(tgz(siteFiles()))).toBe('tar.gz');
    expect(detectFormat(zip(siteFiles()))).toBe('zip');
    expect(detectFormat(zip([]))).toBe('zip');
    expect(detectFormat(tar(siteFiles()))).toBe('tar');
    const v7 = tar(siteFiles());
    v7.fill(0, 257, 265);
    let sum = 0;
    v7.fill(0x20, 148, 156);
    for (let i = 0; i < 512; i++) sum += v7[i]!;
    v7.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'latin1');
    expect(detectFormat(v7.subarray(0, 512))).toBe('tar');
  });
  it('names the file when it refuses', () => {
    expect(() => detectFormat(Buffer.from('hello'), 'x.bin')).toThrow(/x\.bin/);
  });
});
