import { afterEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fetchPackage } from '../../src/fetch/index.js';
import { MODE, siteFiles, tar, tgz, zip } from '../helpers/evil-archives.js';
import { FAST, rig, tree, type Rig } from './emu.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const site = siteFiles();
/** Each attack as the export archive the (compromised) service hands out. */
const EVIL: Array<[string, string, Buffer]> = [
  ['zip-slip: ../ in a zip entry name', 'evil.zip', zip([...site, { name: '../evil.txt', data: 'pwned' }])],
  ['absolute path in a tar.gz entry', 'evil.tar.gz', tgz([...site, { name: '/tmp/evil.txt', data: 'pwned' }])],
  ['symlink to /etc/passwd in a tar', 'evil.tar', tar([...site, { name: 'passwd', type: '2', linkname: '/etc/passwd' }])],
  ['hard link in a tar.gz', 'evil.tar.gz', tgz([...site, { name: 'hl', type: '1', linkname: 'index.html' }])],
  ['character device in a tar.gz', 'evil.tar.gz', tgz([...site, { name: 'dev', type: '3' }])],
  ['symlink in a zip (unix mode)', 'evil.zip', zip([...site, { name: 'link', data: '/etc/passwd', unixMode: MODE.symlink }])],
  // (a case pair such as INDEX.html beside index.html is refused only where the destination folds case: fetch extracts nothing)
  [
    'duplicate path after NFC normalisation in a zip',
    'evil.zip',
    zip([...site, { name: 'cafe\u0301.html', data: 'one' }, { name: 'caf\u00e9.html', data: 'shadow' }]),
  ],
  ['exact duplicate path in a tar', 'evil.tar', tar([...site, { name: 'index.html', data: 'shadow' }])],
  ['NUL byte in a zip entry name', 'evil.zip', zip([...site, { name: Buffer.from('a\0b.html'), data: 'x' }])],
  ['backslash traversal in a zip name', 'evil.zip', zip([...site, { name: '..\\evil.txt', data: 'pwned' }])],
  ['decompression bomb (ratio) in a tar.gz', 'evil.tar.gz', tgz([...site, { name: 'bomb.bin', data: Buffer.alloc(8 * 1024 * 1024) }])],
  ['truncated tar.gz', 'evil.tar.gz', tgz(site).subarray(0, 60)],
];

describe('evil export archives served by the emulator', () => {
  for (const [attack, file, bytes] of EVIL) {
    it(`${attack}: exit 4, no package, no part, nothing written outside the output folder`, async () => {
      r = await rig();
      const src = join(r.dir, file);
      await writeFile(src, bytes);
      r.emu.setFaults({ serveArchive: [{ domain: 'docs.example.com', path: src }] });
      const err = await fetchPackage({ client: r.client, domain: 'docs.example.com', outDir: r.out, ...FAST }).catch((e: unknown) => e);
      expect(err).toMatchObject({ exitCode: 4 });
      expect(await tree(r.out)).toEqual([]);
      expect(await tree(r.dir)).toEqual([file, 'out'].sort());
    });
  }
});
