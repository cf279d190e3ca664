import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractArchive, scanArchive } from '../../src/archive/index.js';
import { UnsafeArchiveError } from '../../src/errors.js';
import { siteFiles, tar, tgz, zip } from '../helpers/evil-archives.js';
import { expectRefusal, sandbox, type Sandbox } from './sandbox.js';

let sb: Sandbox;
beforeEach(async () => (sb = await sandbox()));
afterEach(() => sb.cleanup());

const nfc = 'site/caf\u00e9.html';
const nfd = 'site/cafe\u0301.html';
const cases: [string, string, string][] = [
  ['exact duplicate path overwrites the verified file', 'site/index.html', 'site/index.html'],
  ['case-folded duplicate (Guide.html vs guide.html) collides on case-insensitive disks', 'site/Guide.html', 'site/guide.html'],
  ['full case folding duplicate (straße vs STRASSE)', 'site/stra\u00dfe.html', 'site/STRASSE.html'],
  ['NFC vs NFD duplicate (café) collides on normalising file systems', nfc, nfd],
  ['file then folder of the same name (a vs a/b)', 'site/a', 'site/a/b.html'],
  ['folder then file of the same name (a/b vs a)', 'site/a/b.html', 'site/A'],
];

describe('duplicate paths', () => {
  for (const [title, first, second] of cases) {
    const entries = [...siteFiles('site/'), { name: first, data: 'first' }, { name: second, data: 'second' }];
    for (const [fmt, bytes] of [['tar', tar(entries)], ['tar.gz', tgz(entries)], ['zip', zip(entries)]] as const) {
      it(`${title} (${fmt}) is refused naming the second entry`, async () => {
        const path = await sb.put('dup', bytes);
        const before = await sb.outsideSnapshot();
        const e = await expectRefusal(extractArchive({ path }, sb.dest), UnsafeArchiveError, 'AIRLOCK_DUPLICATE_PATH', second);
        expect(e.message).toContain(JSON.stringify(second));
        expect(await sb.outsideSnapshot()).toEqual(before);
        await expectRefusal(scanArchive({ path }), UnsafeArchiveError, 'AIRLOCK_DUPLICATE_PATH', second);
      });
    }
  }

  it('a repeated folder entry is not a duplicate (folders are allowed, not listed)', async () => {
    const bytes = tar([{ name: 'site/', type: '5' }, { name: 'site/', type: '5' }, ...siteFiles('site/')]);
    const r = await scanArchive({ path: await sb.put('dirs.tar', bytes) });
    expect(r.files.map((f) => f.path)).toEqual(['_next/static/app.3f2a.js', 'guide/start.html', 'index.html']);
  });
});
