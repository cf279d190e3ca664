import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { extractArchive, probeCaseFolding, scanArchive } from '../../src/archive/index.js';
import { UnsafeArchiveError } from '../../src/errors.js';
import { siteFiles, tar, tgz, zip, type TarEntry } from '../helpers/evil-archives.js';
import { expectRefusal, sandbox, type Sandbox } from './sandbox.js';

let sb: Sandbox;
beforeEach(async () => (sb = await sandbox()));
afterEach(() => sb.cleanup());

const nfc = 'site/caf\u00e9.html';
const nfd = 'site/cafe\u0301.html';
const formats = (entries: TarEntry[]) =>
  [
    ['tar', tar(entries)],
    ['tar.gz', tgz(entries)],
    ['zip', zip(entries as never)],
  ] as const;

/** Refused on every file system: one name would overwrite the other wherever it lands. */
const everywhere: [string, string, string][] = [
  ['exact duplicate path overwrites the verified file', 'site/index.html', 'site/index.html'],
  ['NFC vs NFD duplicate (café) collides on normalising file systems', nfc, nfd],
  ['file then folder of the same name (a vs a/b)', 'site/a', 'site/a/b.html'],
  ['folder then file of the same name (a/b vs a)', 'site/a/b.html', 'site/a'],
];

/** Distinct files on a case-sensitive disk; one file on a case-folding one. */
const casePairs: [string, string, string][] = [
  ['case pair (rules/A001/index.html beside rules/a001/index.html)', 'site/rules/A001/index.html', 'site/rules/a001/index.html'],
  ['case pair of pages (Guide.html beside guide.html)', 'site/Guide.html', 'site/guide.html'],
  ['full case folding pair (straße vs STRASSE)', 'site/stra\u00dfe.html', 'site/STRASSE.html'],
  ['folders differing in case with different files (Docs/a vs docs/b)', 'site/Docs/a.html', 'site/docs/b.html'],
  ['file vs folder differing in case (a vs A/b)', 'site/a', 'site/A/b.html'],
];

describe('duplicate paths', () => {
  for (const [title, first, second] of everywhere) {
    for (const [fmt, bytes] of formats([...siteFiles('site/'), { name: first, data: 'first' }, { name: second, data: 'second' }])) {
      for (const foldsCase of [false, true]) {
        it(`${title} (${fmt}) is refused naming both entries (destination folds case: ${foldsCase})`, async () => {
          const path = await sb.put('dup', bytes);
          const before = await sb.outsideSnapshot();
          const e = await expectRefusal(extractArchive({ path }, sb.dest, { foldsCase }), UnsafeArchiveError, 'AIRLOCK_DUPLICATE_PATH', second);
          expect(e.message).toContain(JSON.stringify(second));
          expect(e.details.earlier).toBe(first);
          expect(await sb.outsideSnapshot()).toEqual(before);
          await expectRefusal(scanArchive({ path }, { foldsCase }), UnsafeArchiveError, 'AIRLOCK_DUPLICATE_PATH', second);
        });
      }
    }
  }

  it('a repeated folder entry is not a duplicate (folders are allowed, not listed)', async () => {
    const bytes = tar([{ name: 'site/', type: '5' }, { name: 'site/', type: '5' }, ...siteFiles('site/')]);
    const r = await scanArchive({ path: await sb.put('dirs.tar', bytes) });
    expect(r.files.map((f) => f.path)).toEqual(['_next/static/app.3f2a.js', 'guide/start.html', 'index.html']);
  });
});

describe('names that differ only in letter case', () => {
  for (const [title, first, second] of casePairs) {
    for (const [fmt, bytes] of formats([...siteFiles('site/'), { name: first, data: 'first' }, { name: second, data: 'second' }])) {
      it(`${title} (${fmt}): extracted as two files where the destination is case-sensitive`, async () => {
        const path = await sb.put('pair', bytes);
        const r = await extractArchive({ path }, sb.dest, { foldsCase: false });
        const [a, b] = [first.slice(5), second.slice(5)];
        expect(r.files.map((f) => f.path)).toEqual(expect.arrayContaining([a, b]));
        expect(await readFile(join(sb.dest, a), 'utf8')).toBe('first');
        expect(await readFile(join(sb.dest, b), 'utf8')).toBe('second');
        // scan (verify, fetch, pack) writes nothing and accepts the pair
        expect((await scanArchive({ path })).files.length).toBe(r.files.length);
      });

      it(`${title} (${fmt}): refused naming both entries where the destination folds case`, async () => {
        const path = await sb.put('pair', bytes);
        const before = await sb.outsideSnapshot();
        const e = await expectRefusal(extractArchive({ path }, sb.dest, { foldsCase: true }), UnsafeArchiveError, 'AIRLOCK_CASE_COLLISION', second);
        expect(e.details.earlier).toBe(first);
        expect(e.message).toContain(JSON.stringify(first));
        expect(e.message).toContain(JSON.stringify(second));
        expect(e.message).toContain('folds case');
        expect(await sb.outsideSnapshot()).toEqual(before);
      });
    }
  }

  it('the real probe: this disk (ext4) does not fold case, and the probe leaves the folder as it was', async () => {
    const dir = join(sb.root, 'work');
    const before = await readdir(dir);
    expect(await probeCaseFolding(dir)).toBe(false);
    expect(await readdir(dir)).toEqual(before);
  });

  it('extractArchive probes its destination when not told: the case pair lands here as two files', async () => {
    const path = await sb.put(
      'pair.tar',
      tar([...siteFiles(), { name: 'rules/A001/index.html', data: 'upper' }, { name: 'rules/a001/index.html', data: 'lower' }]),
    );
    const r = await extractArchive({ path }, sb.dest);
    expect(r.files.filter((f) => f.path.startsWith('rules/')).map((f) => f.path)).toEqual(['rules/A001/index.html', 'rules/a001/index.html']);
    expect((await readdir(sb.dest)).filter((n) => n.startsWith('.'))).toEqual([]);
  });
});
