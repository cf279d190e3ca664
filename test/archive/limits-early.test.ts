import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdir } from 'node:fs/promises';
import { extractArchive, scanArchive } from '../../src/archive/index.js';
import { UnsafeArchiveError } from '../../src/errors.js';
import { siteFiles, zip, type ZipEntry } from '../helpers/evil-archives.js';
import { expectRefusal, sandbox, type Sandbox } from './sandbox.js';

let sb: Sandbox;
beforeEach(async () => (sb = await sandbox()));
afterEach(() => sb.cleanup());

/**
 * A zip's central directory lists every entry and its declared size up front, so the file count
 * and the expanded size are enforced before the first entry is read or written; a tar can only
 * be refused as it goes (the store checks the signed manifest's count and sizes first).
 */
describe('limits before writing', () => {
  // The offending entries come FIRST in the archive: a reader refusing as it goes would write the site before them.
  const pages = Array.from({ length: 6 }, (_, i): ZipEntry => ({ name: `p${i}.html`, data: `page ${i}`, method: 0 }));

  it('zip over the file count: refused from the central directory, nothing written (not even the first file)', async () => {
    const path = await sb.put('many.zip', zip([...siteFiles(), ...pages]));
    const before = await sb.outsideSnapshot();
    await expectRefusal(extractArchive({ path }, sb.dest, { limits: { maxFiles: 5 } }), UnsafeArchiveError, 'AIRLOCK_TOO_MANY_FILES', 'p2.html');
    expect(await readdir(sb.dest)).toEqual([]);
    expect(await sb.outsideSnapshot()).toEqual(before);
  });

  it('zip over the declared expanded size: refused from the central directory, nothing written', async () => {
    const big = { name: 'z/big.bin', data: Buffer.alloc(64 * 1024, 7), method: 0 };
    const path = await sb.put('large.zip', zip([...siteFiles(), ...pages, big]));
    await expectRefusal(extractArchive({ path }, sb.dest, { limits: { maxExpandedBytes: 32 * 1024 } }), UnsafeArchiveError, 'AIRLOCK_TOO_LARGE', 'z/big.bin');
    expect(await readdir(sb.dest)).toEqual([]);
  });

  it('200,001 entries (zip64 end records): refused with the default limits before anything is written', async () => {
    const entries: ZipEntry[] = [...siteFiles().map((f) => ({ ...f, method: 0 }))];
    for (let i = 0; entries.length < 200_001; i++) entries.push({ name: `d/${i}`, method: 0 });
    const path = await sb.put('200k.zip', zip(entries));
    const t0 = performance.now();
    const e = await expectRefusal(extractArchive({ path }, sb.dest), UnsafeArchiveError, 'AIRLOCK_TOO_MANY_FILES', 'd/199997');
    expect(e.details.limit).toBe(200_000);
    expect(await readdir(sb.dest)).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(20_000); // bounded: a sanity limit, not a benchmark
    await expectRefusal(scanArchive({ path }), UnsafeArchiveError, 'AIRLOCK_TOO_MANY_FILES', 'd/199997');
  });
});
