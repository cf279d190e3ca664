import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { extractArchive } from '../../src/archive/index.js';
import { UnsafeArchiveError } from '../../src/errors.js';
import { MODE, siteFiles, tar, tgz, zip, type TarEntry, type ZipEntry } from '../helpers/evil-archives.js';
import { expectRefusal, sandbox, type Sandbox } from './sandbox.js';

let sb: Sandbox;
beforeEach(async () => (sb = await sandbox()));
afterEach(() => sb.cleanup());

async function refused(bytes: Buffer, code: string, subject: string) {
  const path = await sb.put('evil', bytes);
  const before = await sb.outsideSnapshot();
  await expectRefusal(extractArchive({ path }, sb.dest), UnsafeArchiveError, code, subject);
  expect(await sb.outsideSnapshot()).toEqual(before);
}

function both(evilTar: TarEntry[] | null, evilZip: ZipEntry[] | null) {
  const site = siteFiles('site/');
  const out: [string, Buffer][] = [];
  if (evilTar) out.push(['tar', tar([...site, ...evilTar])], ['tar.gz', tgz([...site, ...evilTar])]);
  if (evilZip) out.push(['zip', zip([...site, ...evilZip])]);
  return out;
}

describe('links and special files', () => {
  for (const [fmt, bytes] of both(
    [{ name: 'site/etc', type: '2', linkname: '/etc' }],
    [{ name: 'site/etc', data: '/etc', unixMode: MODE.symlink, method: 0 }],
  )) {
    it(`symlink entry pointing at /etc is refused (${fmt})`, () => refused(bytes, 'AIRLOCK_LINK', 'site/etc'));
  }

  for (const [fmt, bytes] of both(
    [
      { name: 'site/out', type: '2', linkname: '../../outside' },
      { name: 'site/out/evil.html', data: 'pwned' },
    ],
    [
      { name: 'site/out', data: '../../outside', unixMode: MODE.symlink, method: 0 },
      { name: 'site/out/evil.html', data: 'pwned' },
    ],
  )) {
    it(`symlink then a file written through it is refused at the link and never lands outside (${fmt})`, async () => {
      await refused(bytes, 'AIRLOCK_LINK', 'site/out');
      expect(existsSync(join(sb.root, 'outside', 'evil.html'))).toBe(false);
      expect(existsSync(join(sb.dest, 'site', 'out'))).toBe(false);
    });
  }

  for (const [fmt, bytes] of both([{ name: 'site/passwd', type: '1', linkname: '/etc/passwd' }], null)) {
    it(`hard link entry to /etc/passwd is refused (${fmt})`, () => refused(bytes, 'AIRLOCK_LINK', 'site/passwd'));
  }

  for (const [fmt, bytes] of both([{ name: 'site/null', type: '3' }], [{ name: 'site/null', data: '', unixMode: MODE.charDevice, method: 0 }])) {
    it(`character device entry is refused (${fmt})`, () => refused(bytes, 'AIRLOCK_SPECIAL_FILE', 'site/null'));
  }
  for (const [fmt, bytes] of both([{ name: 'site/sda', type: '4' }], [{ name: 'site/sda', data: '', unixMode: MODE.blockDevice, method: 0 }])) {
    it(`block device entry is refused (${fmt})`, () => refused(bytes, 'AIRLOCK_SPECIAL_FILE', 'site/sda'));
  }
  for (const [fmt, bytes] of both([{ name: 'site/pipe', type: '6' }], [{ name: 'site/pipe', data: '', unixMode: MODE.fifo, method: 0 }])) {
    it(`fifo entry is refused (${fmt})`, () => refused(bytes, 'AIRLOCK_SPECIAL_FILE', 'site/pipe'));
  }
  for (const [fmt, bytes] of both([{ name: 'site/sparse.bin', type: 'S', data: 'x' }], null)) {
    it(`unknown/unsupported tar entry type (GNU sparse) is refused, not silently skipped (${fmt})`, () =>
      refused(bytes, 'AIRLOCK_SPECIAL_FILE', 'site/sparse.bin'));
  }
  for (const [fmt, bytes] of both([{ name: 'site/a.html', type: '0', linkname: '/etc/passwd', data: 'x' }], null)) {
    it(`regular file entry carrying a link target is refused (${fmt})`, async () => {
      const path = await sb.put('evil', bytes);
      const before = await sb.outsideSnapshot();
      const err = await extractArchive({ path }, sb.dest).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as { exitCode: number }).exitCode).toBe(4);
      expect(await sb.outsideSnapshot()).toEqual(before);
    });
  }
});
