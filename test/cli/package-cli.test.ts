import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makePackage } from '../helpers/make-package.js';
import { loadPrivateKey } from '../../src/package/keys.js';
import { assemble, flip, membersOf, type Member } from '../package/craft.js';
import { airlock } from '../helpers/bin.js';

const run = (...args: string[]) => airlock(args);

let dir: string;
let keyPrefix: string;
let signed: string;
let unsigned: string;
let signerKey: KeyObject;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-pkgcli-'));
  keyPrefix = join(dir, 'signer');
  const r = run('keygen', '--out', keyPrefix);
  expect(r.status, r.stderr).toBe(0);
  signerKey = await loadPrivateKey(`${keyPrefix}.key`);
  signed = (await makePackage({ outDir: join(dir, 's'), signKey: `${keyPrefix}.key`, format: 'zip' })).pkgPath;
  unsigned = (await makePackage({ outDir: join(dir, 'u') })).pkgPath;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('airlock keygen', () => {
  it('writes PREFIX.key with mode 0600 and PREFIX.pub, prints the fingerprint', async () => {
    expect((await stat(`${keyPrefix}.key`)).mode & 0o777).toBe(0o600);
    expect(await readFile(`${keyPrefix}.pub`, 'utf8')).toContain('BEGIN PUBLIC KEY');
  });
  it('refuses to overwrite an existing key (exit 2) and keeps it', async () => {
    const before = await readFile(`${keyPrefix}.key`);
    const r = run('keygen', '--out', keyPrefix);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${keyPrefix}.key already exists`);
    expect((await readFile(`${keyPrefix}.key`)).equals(before)).toBe(true);
  });
  it('requires --out', () => {
    expect(run('keygen').status).toBe(2);
  });
});

describe('airlock inspect', () => {
  it('prints the manifest as JSON and as prose', () => {
    const j = run('inspect', signed, '--json');
    expect(j.status, j.stderr).toBe(0);
    const doc = JSON.parse(j.stdout) as { signature: string; manifest: { domain: string; archive: { name: string }; files: unknown[] } };
    expect(doc.signature).toBe('present');
    expect(doc.manifest.domain).toBe('docs.example.com');
    expect(doc.manifest.archive.name).toBe('bundle.zip');
    expect(doc.manifest.files.length).toBeGreaterThan(16);
    const p = run('inspect', unsigned);
    expect(p.stdout).toMatch(/version\s+v1/);
    expect(p.stdout).toMatch(/signature\s+none/);
  });
});

describe('airlock verify', () => {
  it('a signed package with its key trusted: exit 0, signer reported', () => {
    const r = run('verify', signed, '--trust', `${keyPrefix}.pub`, '--json');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, signed: true, signer: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), version: 'v1' });
  });
  it('a signed package with no key trusted: exit 4 (untrusted), also with --allow-unsigned', () => {
    for (const extra of [[], ['--allow-unsigned']]) {
      const r = run('verify', signed, ...extra);
      expect(r.status).toBe(4);
      expect(r.stderr).toContain('AIRLOCK_UNTRUSTED_SIGNATURE');
    }
  });
  it('an unsigned package: exit 4 unless --allow-unsigned', () => {
    expect(run('verify', unsigned).status).toBe(4);
    const r = run('verify', unsigned, '--allow-unsigned');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('UNSIGNED');
  });
  it('usage errors exit 2: no package, a missing --trust file', () => {
    expect(run('verify').status).toBe(2);
    expect(run('verify', signed, '--trust', join(dir, 'nope.pub')).status).toBe(2);
  });
});

describe('airlock verify: bad packages exit 4 and name the reason', () => {
  const stranger = generateKeyPairSync('ed25519');
  let n = 0;
  const variant = async (edit: (m: Member[]) => Member[]) => {
    const p = join(dir, `bad-${++n}.airlock`);
    await assemble(p, edit(await membersOf(signed)));
    return p;
  };
  const manifestEdit = (m: Member[], f: (j: Record<string, unknown>) => void): Member[] => {
    const j = JSON.parse(m[0]!.data.toString()) as Record<string, unknown>;
    f(j);
    // Re-signed by the trusted key, so the failure is the digest comparison, not the signature.
    const data = Buffer.from(JSON.stringify(j));
    return [{ name: 'airlock.json', data }, { name: 'airlock.json.sig', data: sign(null, data, signerKey) }, m[2]!];
  };
  const cases: Array<[string, () => Promise<string>, RegExp]> = [
    [
      'a flipped archive byte',
      async () => {
        const p = join(dir, 'flip.airlock');
        await copyFile(signed, p);
        const b = await readFile(p);
        flip(b, b.length - 2048); // inside the zip's central directory / end record
        await writeFile(p, b);
        return p;
      },
      /AIRLOCK_/,
    ],
    [
      'a wrong file digest',
      () =>
        variant((m) =>
          manifestEdit(m, (j) => {
            (j.files as { sha256: string }[])[0]!.sha256 = '0'.repeat(64);
          }),
        ),
      /AIRLOCK_DIGEST_MISMATCH/,
    ],
    [
      'a missing file',
      () =>
        variant((m) =>
          manifestEdit(m, (j) => {
            (j.files as unknown[]).push({ path: 'gone.html', size: 1, sha256: '0'.repeat(64) });
          }),
        ),
      /gone\.html .*AIRLOCK_MISSING_FILE/,
    ],
    [
      'an extra file',
      () =>
        variant((m) =>
          manifestEdit(m, (j) => {
            j.files = (j.files as { path: string }[]).filter((f) => f.path !== '404.html');
          }),
        ),
      /404\.html .*AIRLOCK_EXTRA_FILE/,
    ],
    ['an extra tar member', () => variant((m) => [...m, { name: 'extra.txt', data: Buffer.from('x') }]), /"extra\.txt".*AIRLOCK_PACKAGE_MEMBERS/],
    ['members out of order', () => variant((m) => [m[1]!, m[0]!, m[2]!]), /first member is "airlock\.json\.sig".*AIRLOCK_PACKAGE_MEMBERS/],
    [
      'a manifest that is not JSON',
      () => variant((m) => [{ name: 'airlock.json', data: Buffer.from('<xml/>') }, ...m.slice(1)]),
      /is not valid JSON.*AIRLOCK_BAD_MANIFEST/,
    ],
    [
      'a manifest lacking fields',
      () =>
        variant((m) =>
          manifestEdit(m, (j) => {
            delete j.domain;
          }),
        ),
      /domain: .*AIRLOCK_BAD_MANIFEST/,
    ],
    [
      'a signature by an untrusted key',
      () => variant((m) => [m[0]!, { name: 'airlock.json.sig', data: sign(null, m[0]!.data, stranger.privateKey) }, m[2]!]),
      /AIRLOCK_UNTRUSTED_SIGNATURE/,
    ],
    [
      'a truncated package',
      async () => {
        const p = join(dir, 'trunc.airlock');
        await copyFile(signed, p);
        await truncate(p, 5000);
        return p;
      },
      /truncated.*AIRLOCK_TRUNCATED/,
    ],
  ];
  it.each(cases)('%s', async (_name, build, reason) => {
    const p = await build();
    const r = run('verify', p, '--trust', `${keyPrefix}.pub`);
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toMatch(reason);
  });
});
