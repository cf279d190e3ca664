import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlock } from '../helpers/bin.js';
import { makeArchive, FIXTURE_SITE } from '../helpers/make-package.js';
import { siteFiles, tgz } from '../helpers/evil-archives.js';
import { treeDigest } from '../store/helpers.js';

/** `airlock pack` through the built binary. */
let dir: string;
let key: string;
let archive: string;
let n = 0;
const fresh = async () => {
  const d = join(dir, `case-${++n}`);
  await mkdir(d, { recursive: true });
  return d;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-pack-cli-'));
  key = join(dir, 'signer');
  expect(airlock(['keygen', '--out', key]).status).toBe(0);
  archive = join(dir, 'export.tar.gz');
  await makeArchive(FIXTURE_SITE, 'tar.gz', archive, true);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('airlock pack', () => {
  it('pack → verify → import round trip: the packed export lands in the store, signed by the key', async () => {
    const d = await fresh();
    const p = airlock([
      'pack',
      archive,
      '--domain',
      'docs.example.com',
      '--version-label',
      'r1',
      '--sign-key',
      `${key}.key`,
      '--out',
      join(d, 'out'),
      '--json',
    ]);
    expect(p.status, p.stderr).toBe(0);
    const doc = JSON.parse(p.stdout) as { ok: boolean; package: string; signed: boolean; signer: string; files: number };
    expect(doc).toMatchObject({ ok: true, package: join(d, 'out', 'docs.example.com-r1.airlock'), signed: true, signer: expect.stringMatching(/^sha256:/) });
    expect(p.stderr).not.toMatch(/unsigned/);
    const v = airlock(['verify', doc.package, '--trust', `${key}.pub`, '--json']);
    expect(v.status, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ signed: true, signer: doc.signer, files: doc.files, version: 'r1' });
    const store = join(d, 'store');
    const i = airlock(['import', doc.package, '--store', store, '--trust', `${key}.pub`, '--activate', '--no-precompress', '--json']);
    expect(i.status, i.stderr).toBe(0);
    expect(JSON.parse(i.stdout)).toMatchObject({ version: 'r1', status: 'imported', activated: true });
    const l = airlock(['list', '--store', store]);
    expect(l.stdout).toMatch(/r1/);
    expect(await readFile(join(store, 'versions', 'r1', 'site', 'index.html'))).toEqual(await readFile(join(FIXTURE_SITE, 'index.html')));
  });

  it('unsigned: prints the package path, warns on stderr, and verify needs --allow-unsigned', async () => {
    const d = await fresh();
    const p = airlock(['pack', archive, '--domain', 'docs.example.com', '--version-label', 'u1'], { cwd: d });
    expect(p.status, p.stderr).toBe(0);
    expect(p.stdout.trim()).toBe(join(d, 'docs.example.com-u1.airlock'));
    expect(p.stderr).toMatch(/warning: .* is unsigned \(no --sign-key\); importers must pass --allow-unsigned/);
    expect(airlock(['verify', p.stdout.trim()]).status).toBe(4);
    expect(airlock(['verify', p.stdout.trim(), '--allow-unsigned']).status).toBe(0);
  });

  it('zip-slip: pack of an unsafe archive exits 4 naming the entry, and writes nothing', async () => {
    const d = await fresh();
    const evil = join(d, 'evil.tar.gz');
    await writeFile(evil, tgz([...siteFiles(), { name: '../../outside.html', data: 'x' }]));
    const before = await treeDigest(d);
    const p = airlock(['pack', evil, '--domain', 'docs.example.com', '--version-label', 'e1', '--sign-key', `${key}.key`, '--out', join(d, 'out')]);
    expect(p.status, p.stderr).toBe(4);
    expect(p.stderr).toMatch(/"\.\.\/\.\.\/outside\.html".*AIRLOCK_UNSAFE_PATH/);
    expect(p.stdout).toBe('');
    expect(await treeDigest(d)).toBe(before);
  });

  it('pack over an existing output: exit 2 AIRLOCK_EXISTS before the archive is read; the old file is kept', async () => {
    const d = await fresh();
    const out = join(d, 'docs.example.com-x1.airlock');
    await writeFile(out, 'an older package');
    const garbage = join(d, 'garbage.tgz');
    await writeFile(garbage, 'this would be refused as not an archive (exit 4) if it were read');
    const p = airlock(['pack', garbage, '--domain', 'docs.example.com', '--version-label', 'x1', '--out', d]);
    expect(p.status, p.stderr).toBe(2);
    expect(p.stderr).toContain(`${out} already exists; remove it or choose another --version-label [AIRLOCK_EXISTS]`);
    expect(await readFile(out, 'utf8')).toBe('an older package');
  });

  it.each([
    ['a path', '../etc'],
    ['an escape sequence', 'docs.example.com\u001b[2J'],
    ['a port', 'docs.example.com:443'],
    ['nothing', ''],
  ])('bad --domain (%s): pack and fetch exit 2 naming the flag', (_what, domain) => {
    const p = airlock(['pack', archive, '--domain', domain, '--out', dir]);
    expect(p.status, p.stderr).toBe(2);
    expect(p.stderr).toMatch(/--domain/);
    expect(p.stderr).not.toContain('\u001b');
    // fetch checks its --domain the same way, as a usage error before the key or the network
    const f = airlock(['fetch', '--domain', domain, '--api-url', 'http://127.0.0.1:9', '--out', dir], {
      env: { AIRLOCK_ADMIN_KEY: undefined, AIRLOCK_ADMIN_KEY_FILE: undefined },
    });
    expect(f.status, f.stderr).toBe(2);
    expect(f.stderr).toMatch(/--domain/);
  });

  it('usage errors exit 2: signing key missing, bad label, no archive, missing archive, --out is a file', async () => {
    const d = await fresh();
    const cases: string[][] = [
      ['pack', archive, '--domain', 'docs.example.com', '--sign-key', join(d, 'missing.key'), '--out', d],
      ['pack', archive, '--domain', 'docs.example.com', '--version-label', '-x', '--out', d],
      ['pack', '--domain', 'docs.example.com'],
      ['pack', archive],
      ['pack', join(d, 'no-such.tar.gz'), '--domain', 'docs.example.com', '--out', d],
      ['pack', archive, '--domain', 'docs.example.com', '--out', archive],
      ['pack', archive, '--domain', 'docs.example.com', '--bogus'],
    ];
    for (const args of cases) {
      const p = airlock(args);
      expect(p.status, `${args.join(' ')}: ${p.stderr}`).toBe(2);
    }
    const missing = airlock(cases[0]!).stderr;
    expect(missing).toMatch(/missing\.key does not exist/);
    expect(missing).not.toContain('ENOENT');
    expect(await readdir(d)).toEqual([]);
  });

  it('--help lists every option and the exit codes', () => {
    const h = airlock(['pack', '--help']);
    expect(h.status).toBe(0);
    for (const word of ['--domain', '--version-label', '--sign-key', '--out', '--json', 'Exit codes', 'YYYYMMDD-HHMMSS']) expect(h.stdout).toContain(word);
    expect(airlock(['--help']).stdout).toMatch(/pack\s+turn an export archive/);
  });
});
