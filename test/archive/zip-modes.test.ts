import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { extractArchive, scanArchive } from '../../src/archive/index.js';
import { UnsafeArchiveError } from '../../src/errors.js';
import { MODE, siteFiles, zip } from '../helpers/evil-archives.js';
import { expectRefusal, sandbox, type Sandbox } from './sandbox.js';

let sb: Sandbox;
beforeEach(async () => (sb = await sandbox()));
afterEach(() => sb.cleanup());

/**
 * Written by CPython 3.11's zipfile, byte for byte (time.localtime pinned to 2025-01-15 12:00):
 *   with zipfile.ZipFile(b, 'w', zipfile.ZIP_DEFLATED) as z:
 *       z.writestr('index.html', '<!doctype html><title>Home</title>')
 *       z.writestr('guide/', '')
 *       z.writestr('guide/start.html', '<!doctype html><title>Start</title>')
 * "version made by" 3.20 (Unix); files get external attributes 0o600 << 16 (permissions, NO file
 * type bits); the folder 0o40775 << 16 | 0x10.
 */
const PYTHON_WRITESTR_ZIP = Buffer.from(
  '504b030414000000080000602f5a3d7a06201f000000220000000a000000696e6465782e68746d6cb3514cc94f2ea92c4855c828c9cdb1b329c92cc949b5f3c8cf4db5d187b001' +
    '504b030414000000080000602f5a0000000002000000000000000600000067756964652f0300' +
    '504b030414000000080000602f5a1c48a0f820000000230000001000000067756964652f73746172742e68746d6cb3514cc94f2ea92c4855c828c9cdb1b329c92cc949b50b2e492c2ab1d1877000' +
    '504b0102140314000000080000602f5a3d7a06201f000000220000000a0000000000000000000000800100000000696e6465782e68746d6c' +
    '504b0102140314000000080000602f5a000000000200000000000000060000000000000000001000fd414700000067756964652f' +
    '504b0102140314000000080000602f5a1c48a0f8200000002300000010000000000000000000000080016d00000067756964652f73746172742e68746d6c' +
    '504b05060000000003000300aa000000bb0000000000',
  'hex',
);

describe('zip entries whose Unix mode has permission bits but no file-type bits', () => {
  it("Python's zipfile.writestr archive (external attrs 0o600 << 16) is read as regular files", async () => {
    expect(PYTHON_WRITESTR_ZIP.length).toBe(379);
    const cd = PYTHON_WRITESTR_ZIP.indexOf(Buffer.from('PK\x01\x02', 'latin1'));
    expect(PYTHON_WRITESTR_ZIP.readUInt16LE(cd + 4)).toBe(0x0314); // made by Unix, version 2.0
    expect(PYTHON_WRITESTR_ZIP.readUInt32LE(cd + 38)).toBe(0o600 << 16); // index.html: no file type bits
    const path = await sb.put('python.zip', PYTHON_WRITESTR_ZIP);
    const scan = await scanArchive({ path });
    expect(scan.files.map((f) => [f.path, f.size])).toEqual([
      ['guide/start.html', 35],
      ['index.html', 34],
    ]);
    const r = await extractArchive({ path }, sb.dest);
    expect(r).toEqual(scan);
    expect(await readFile(join(sb.dest, 'index.html'), 'utf8')).toBe('<!doctype html><title>Home</title>');
    expect((await stat(join(sb.dest, 'guide'))).isDirectory()).toBe(true);
    expect((await stat(join(sb.dest, 'guide/start.html'))).isFile()).toBe(true);
  });

  for (const mode of [0o600, 0o644, 0o755, 0o7777]) {
    it(`permission-only mode 0o${mode.toString(8)} on a file name is a regular file`, async () => {
      const files = siteFiles().map((f) => ({ ...f, unixMode: mode }));
      const r = await scanArchive({ path: await sb.put('perm.zip', zip(files)) });
      expect(r.files.map((f) => f.path)).toEqual(['_next/static/app.3f2a.js', 'guide/start.html', 'index.html']);
    });
  }

  it('a folder still needs the directory type bit, a trailing "/" or the MS-DOS directory bit', async () => {
    // "guide/" with permission bits only: a folder by its name; "docs" with 0o755 and no slash: a file.
    const r = await scanArchive({
      path: await sb.put('dirs.zip', zip([{ name: 'guide/', data: '', unixMode: 0o755 }, { name: 'docs', data: 'x', unixMode: 0o755 }, ...siteFiles()])),
    });
    expect(r.files.map((f) => f.path)).toEqual(['_next/static/app.3f2a.js', 'docs', 'guide/start.html', 'index.html']);
  });

  it('special files keep being refused by their type bits (symlink with permissions 0o777)', async () => {
    const path = await sb.put('link.zip', zip([...siteFiles(), { name: 'evil', data: '/etc/passwd', unixMode: MODE.symlink, method: 0 }]));
    await expectRefusal(scanArchive({ path }), UnsafeArchiveError, 'AIRLOCK_LINK', 'evil');
  });

  it('an unknown file type (type bits 0o030000) is still refused by name', async () => {
    const path = await sb.put('odd.zip', zip([...siteFiles(), { name: 'odd', data: 'x', unixMode: 0o030644 }]));
    const e = await expectRefusal(scanArchive({ path }), UnsafeArchiveError, 'AIRLOCK_SPECIAL_FILE', 'odd');
    expect(e.message).toContain('unknown file type 0o30000');
  });
});
