import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { extractArchive } from '../../src/archive/index.js';
import { UnsafeArchiveError } from '../../src/errors.js';
import { pax, siteFiles, tar, tgz, zip, type TarEntry } from '../helpers/evil-archives.js';
import { expectRefusal, sandbox, type Sandbox } from './sandbox.js';

let sb: Sandbox;
beforeEach(async () => (sb = await sandbox()));
afterEach(() => sb.cleanup());

/** Honest files first, then the evil one: whatever was written before must stay inside staging. */
function variants(evil: TarEntry[], zipName: string | Buffer) {
  const site = siteFiles('site/');
  return [
    ['tar', tar([...site, ...evil])],
    ['tar.gz', tgz([...site, ...evil])],
    ['zip', zip([...site, { name: zipName, data: 'pwned' }])],
  ] as const;
}

async function refusedInside(bytes: Buffer, subject: string) {
  const path = await sb.put('evil', bytes);
  const before = await sb.outsideSnapshot();
  await expectRefusal(extractArchive({ path }, sb.dest), UnsafeArchiveError, 'AIRLOCK_UNSAFE_PATH', subject);
  expect(await sb.outsideSnapshot()).toEqual(before);
}

const abs = `/tmp/airlock-abs-${randomBytes(4).toString('hex')}/evil.html`;
const attacks: [string, string][] = [
  ['zip-slip: ../ in an entry name climbs out of staging', '../outside/evil.html'],
  ['zip-slip: ../../ after a legit folder climbs two levels', 'site/../../evil.html'],
  ['absolute path entry is refused', abs],
  ['drive letter C:/ entry is refused', 'C:/evil.html'],
  ['drive-relative C:name entry is refused', 'site/C:evil.html'],
  ['backslash traversal ..\\..\\ is refused', '..\\..\\evil.html'],
  ['backslash in a plain name is refused', 'site\\index2.html'],
  ['control character (newline) in a name is refused', 'site/evil\n.html'],
];

describe('path attacks', () => {
  for (const [title, name] of attacks) {
    for (const [fmt, bytes] of variants([{ name, data: 'pwned' }], name)) {
      it(`${title} (${fmt}) and nothing is written outside staging`, async () => {
        await refusedInside(bytes, name);
        expect(existsSync(abs)).toBe(false);
      });
    }
  }

  const nul = 'site/index.html\0../../evil.html';
  for (const [fmt, bytes] of variants([pax({ path: nul }), { name: 'site/innocent.html', data: 'x' }], Buffer.from(nul))) {
    it(`NUL byte inside a name is refused (${fmt}: ${fmt === 'zip' ? 'raw name' : 'pax path record'})`, async () => {
      await refusedInside(bytes, nul);
    });
  }

  for (const [fmt, build] of [
    ['tar', tar],
    ['tar.gz', tgz],
  ] as const) {
    it(`pax header rewriting an innocent name into ../../evil.html is refused (${fmt})`, async () => {
      await refusedInside(build([...siteFiles('site/'), pax({ path: '../../evil.html' }), { name: 'site/innocent.html', data: 'pwned' }]), '../../evil.html');
    });
    it(`GNU long-name record rewriting a name into an absolute path is refused (${fmt})`, async () => {
      await refusedInside(
        build([...siteFiles('site/'), { name: '././@LongLink', type: 'L', data: `${abs}\0` }, { name: 'site/innocent.html', data: 'pwned' }]),
        abs,
      );
      expect(existsSync(abs)).toBe(false);
    });
  }
});
