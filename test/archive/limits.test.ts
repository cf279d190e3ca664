import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { extractArchive, scanArchive } from '../../src/archive/index.js';
import { UnsafeArchiveError } from '../../src/errors.js';
import { siteFiles, tar, tgz, zip } from '../helpers/evil-archives.js';
import { expectRefusal, sandbox, type Sandbox } from './sandbox.js';

let sb: Sandbox;
beforeEach(async () => (sb = await sandbox()));
afterEach(() => sb.cleanup());

const many = [...siteFiles('site/'), ...Array.from({ length: 5 }, (_, i) => ({ name: `site/p${i}.html`, data: `page ${i}` }))];
const zeros = Buffer.alloc(8 * 1024 * 1024);

async function refused(bytes: Buffer, code: string, subject: string, limits = {}) {
  const path = await sb.put('evil', bytes);
  const before = await sb.outsideSnapshot();
  const e = await expectRefusal(extractArchive({ path }, sb.dest, { limits }), UnsafeArchiveError, code, subject);
  expect(await sb.outsideSnapshot()).toEqual(before);
  return e;
}

describe('limits and bombs', () => {
  for (const [fmt, bytes] of [
    ['tar', tar(many)],
    ['tar.gz', tgz(many)],
    ['zip', zip(many)],
  ] as const) {
    it(`too many files: entry past maxFiles is refused by name (${fmt})`, async () => {
      await refused(bytes, 'AIRLOCK_TOO_MANY_FILES', 'site/p1.html', { maxFiles: 4 });
    });
    it(`too many bytes: entry past maxExpandedBytes is refused by name (${fmt})`, async () => {
      const total = many.slice(0, 4).reduce((n, f) => n + Buffer.byteLength(f.data), 0);
      await refused(bytes, 'AIRLOCK_TOO_LARGE', 'site/p1.html', { maxExpandedBytes: total + 3 });
    });
  }

  it('zip bomb: an entry declaring 8 MiB from a few KiB (ratio ~1000) is refused before inflating', async () => {
    const e = await refused(zip([...siteFiles('site/'), { name: 'site/bomb.html', data: zeros }]), 'AIRLOCK_BOMB', 'site/bomb.html');
    expect(e.details.declared).toBe(zeros.length);
  });

  it('zip bomb lying about its size: inflating past the declared size is stopped (header never trusted)', async () => {
    await refused(zip([...siteFiles('site/'), { name: 'site/liar.html', data: zeros, declaredSize: 1000 }]), 'AIRLOCK_BOMB', 'site/liar.html');
  });

  it('zip bomb with overlapping entries sharing one compressed kernel is refused', async () => {
    const z = zip([...siteFiles('site/'), { name: 'site/k1.html', data: 'kernel' }, { name: 'site/k2.html', data: 'kernel', sameDataAs: 3 }]);
    await refused(z, 'AIRLOCK_BOMB', 'site/k2.html');
  });

  it('gzip bomb: a tar.gz inflating at ~1000:1 is stopped while streaming, naming the entry', async () => {
    await refused(tgz([...siteFiles('site/'), { name: 'site/zeros.bin', data: zeros }]), 'AIRLOCK_BOMB', 'site/zeros.bin');
  });

  it('gzip bomb check has a floor: a small very compressible file is accepted', async () => {
    const r = await scanArchive({
      path: await sb.put('ok.tgz', tgz([...siteFiles('site/'), { name: 'site/blank.txt', data: Buffer.alloc(512 * 1024, 0x20) }])),
    });
    expect(r.files.find((f) => f.path === 'blank.txt')?.size).toBe(512 * 1024);
  });

  it('gzip inside gzip (nested compression) is refused', async () => {
    const path = await sb.put('nested.tgz', gzipSync(tgz(siteFiles('site/'))));
    const err = await scanArchive({ path }).catch((e: unknown) => e);
    expect((err as { code: string }).code).toBe('AIRLOCK_UNSUPPORTED');
  });

  it('limits are validated: a negative maxFiles is a programming error, not a disabled check', async () => {
    await expect(scanArchive({ path: await sb.put('x.tar', tar(siteFiles())) }, { limits: { maxFiles: -1 } })).rejects.toThrow();
  });
});
