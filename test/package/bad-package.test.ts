import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPackage } from '../../src/package/reader.js';
import { verifyPackage } from '../../src/package/verify.js';
import { makePackage } from '../helpers/make-package.js';
import { assemble, flip, membersOf, tarMember, type Member } from './craft.js';
import { Header } from 'tar';

/** Packages: each bad package is refused with exit 4, the reason coded and the culprit named. */
let dir: string;
let good: string;
let goodTar: string;
const signer = generateKeyPairSync('ed25519');
const stranger = generateKeyPairSync('ed25519');
const trust = [signer.publicKey];
let n = 0;
const path = () => join(dir, `bad-${++n}.airlock`);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-bad-'));
  good = (await makePackage({ outDir: join(dir, 'good'), signKey: signer.privateKey })).pkgPath;
  goodTar = (await makePackage({ outDir: join(dir, 'good-tar'), format: 'tar', signKey: signer.privateKey })).pkgPath;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function variant(edit: (m: Member[]) => Member[]): Promise<string> {
  const p = path();
  await assemble(p, edit(await membersOf(good)));
  return p;
}
const resign = (m: Member[], key: KeyObject = signer.privateKey): Member[] =>
  m.map((x) => (x.name === 'airlock.json.sig' ? { ...x, data: sign(null, m[0]!.data, key) } : x));
const editManifest = (m: Member[], f: (j: Record<string, unknown>) => void): Member[] => {
  const j = JSON.parse(m[0]!.data.toString()) as Record<string, unknown>;
  f(j);
  return resign([{ name: 'airlock.json', data: Buffer.from(JSON.stringify(j)) }, ...m.slice(1)]);
};
const refused = (code: string, subject?: string | RegExp) =>
  expect.objectContaining({
    exitCode: 4,
    code,
    ...(subject ? { details: expect.objectContaining({ subject: typeof subject === 'string' ? subject : expect.stringMatching(subject) }) } : {}),
  });

describe('bad packages', () => {
  it('the good package verifies (the baseline every case below changes one thing of)', async () => {
    await expect(verifyPackage(good, { trust })).resolves.toMatchObject({ signed: true });
  });

  it('a flipped archive byte: archive sha256 mismatch, naming the bundle', async () => {
    const p = path();
    await copyFile(goodTar, p);
    const bytes = await readFile(p);
    const l = await readPackage(p);
    const at = bytes.indexOf('<!DOCTYPE html>', l.archive.offset) + 20;
    flip(bytes, at, 0x01);
    await writeFile(p, bytes);
    await expect(verifyPackage(p, { trust })).rejects.toThrow(refused('AIRLOCK_ARCHIVE_DIGEST', 'bundle.tar'));
  });

  it('a flipped byte inside a gzip archive is refused (exit 4)', async () => {
    const p = path();
    await copyFile(good, p);
    const bytes = await readFile(p);
    const l = await readPackage(p);
    flip(bytes, l.archive.offset + Math.floor(l.archive.size / 2), 0x40);
    await writeFile(p, bytes);
    await expect(verifyPackage(p, { trust })).rejects.toMatchObject({ exitCode: 4 });
  });

  it('a wrong file digest in the manifest names the file', async () => {
    const p = await variant((m) =>
      editManifest(m, (j) => {
        (j.files as { sha256: string }[])[3]!.sha256 = 'f'.repeat(64);
      }),
    );
    const file = (JSON.parse((await readPackage(p)).manifestBytes.toString()) as { files: { path: string }[] }).files[3]!.path;
    await expect(verifyPackage(p, { trust })).rejects.toThrow(refused('AIRLOCK_DIGEST_MISMATCH', file));
  });

  it('a file listed in the manifest but missing from the archive', async () => {
    const p = await variant((m) =>
      editManifest(m, (j) => {
        (j.files as unknown[]).push({ path: 'zz/missing.html', size: 1, sha256: '0'.repeat(64) });
      }),
    );
    await expect(verifyPackage(p, { trust })).rejects.toThrow(refused('AIRLOCK_MISSING_FILE', 'zz/missing.html'));
  });

  it('an extra file in the archive that the manifest does not list', async () => {
    const p = await variant((m) =>
      editManifest(m, (j) => {
        j.files = (j.files as { path: string }[]).filter((f) => f.path !== 'robots.txt');
      }),
    );
    await expect(verifyPackage(p, { trust })).rejects.toThrow(refused('AIRLOCK_EXTRA_FILE', 'robots.txt'));
  });

  it('an extra tar member after the bundle is named', async () => {
    const p = await variant((m) => [...m, { name: 'evil.sh', data: Buffer.from('rm -rf /\n') }]);
    await expect(readPackage(p)).rejects.toThrow(refused('AIRLOCK_PACKAGE_MEMBERS', 'evil.sh'));
  });

  it('an extra tar member between the manifest and the bundle is named', async () => {
    const p = await variant((m) => [m[0]!, { name: 'README', data: Buffer.from('hi') }, ...m.slice(1)]);
    await expect(readPackage(p)).rejects.toThrow(refused('AIRLOCK_PACKAGE_MEMBERS', 'README'));
  });

  it('members out of order: bundle first, or the signature after the bundle', async () => {
    const first = await variant((m) => [m[2]!, m[0]!, m[1]!]);
    await expect(readPackage(first)).rejects.toThrow(refused('AIRLOCK_PACKAGE_MEMBERS', 'bundle.tar.gz'));
    const late = await variant((m) => [m[0]!, m[2]!, m[1]!]);
    await expect(readPackage(late)).rejects.toThrow(refused('AIRLOCK_PACKAGE_MEMBERS', 'airlock.json.sig'));
  });

  it('a manifest that is not JSON', async () => {
    const p = await variant((m) => resign([{ name: 'airlock.json', data: Buffer.from('format: airlock-package/1\n') }, ...m.slice(1)]));
    await expect(readPackage(p)).rejects.toThrow(refused('AIRLOCK_BAD_MANIFEST', 'airlock.json'));
  });

  it('a manifest lacking fields names them', async () => {
    const p = await variant((m) =>
      editManifest(m, (j) => {
        delete j.files;
        delete j.archive;
      }),
    );
    await expect(readPackage(p)).rejects.toThrow(/archive: .*files: /s);
    await expect(readPackage(p)).rejects.toThrow(refused('AIRLOCK_BAD_MANIFEST'));
  });

  it('a signature by an untrusted key is refused, even with allowUnsigned', async () => {
    const p = await variant((m) => resign(m, stranger.privateKey));
    await expect(verifyPackage(p, { trust })).rejects.toThrow(refused('AIRLOCK_UNTRUSTED_SIGNATURE', 'airlock.json.sig'));
    await expect(verifyPackage(p, { trust, allowUnsigned: true })).rejects.toThrow(refused('AIRLOCK_UNTRUSTED_SIGNATURE'));
    await expect(verifyPackage(good, { trust: [] })).rejects.toThrow(refused('AIRLOCK_UNTRUSTED_SIGNATURE'));
  });

  it('manifest edited after signing (signature kept): the signature no longer verifies', async () => {
    const p = await variant((m) => {
      const j = JSON.parse(m[0]!.data.toString()) as { domain: string };
      j.domain = 'evil.example.com';
      return [{ name: 'airlock.json', data: Buffer.from(JSON.stringify(j)) }, ...m.slice(1)];
    });
    await expect(verifyPackage(p, { trust })).rejects.toThrow(refused('AIRLOCK_UNTRUSTED_SIGNATURE'));
  });

  it('an unsigned package is refused unless allowUnsigned', async () => {
    const p = await variant((m) => m.filter((x) => x.name !== 'airlock.json.sig'));
    await expect(verifyPackage(p, { trust })).rejects.toThrow(refused('AIRLOCK_UNSIGNED'));
    await expect(verifyPackage(p, { trust, allowUnsigned: true })).resolves.toMatchObject({ signed: false, signer: null });
  });

  it('a truncated package: cut in the bundle, in the manifest, and without its end blocks', async () => {
    const size = (await readFile(good)).length;
    for (const cut of [Math.floor(size / 2), 700, size - 1024]) {
      const p = path();
      await copyFile(good, p);
      await truncate(p, cut);
      await expect(readPackage(p)).rejects.toThrow(refused('AIRLOCK_TRUNCATED'));
    }
  });

  it('pax-header smuggling: an extended header renaming the next member is refused, not followed', async () => {
    const members = await membersOf(good);
    const pax = new Header({ path: 'PaxHeaders/airlock.json', type: 'ExtendedHeader', size: 0, mode: 0o644, mtime: new Date(0) });
    const block = Buffer.alloc(512);
    pax.encode(block, 0);
    const p = path();
    await writeFile(p, Buffer.concat([block, ...members.map((m) => tarMember(m)), Buffer.alloc(1024)]));
    await expect(readPackage(p)).rejects.toThrow(refused('AIRLOCK_PACKAGE_MEMBERS', 'PaxHeaders/airlock.json'));
  });

  it('a signature that is not 64 bytes, and an archive member with a name the contract does not allow', async () => {
    const short = await variant((m) => m.map((x) => (x.name === 'airlock.json.sig' ? { ...x, data: x.data.subarray(0, 32) } : x)));
    await expect(readPackage(short)).rejects.toThrow(refused('AIRLOCK_BAD_SIGNATURE', 'airlock.json.sig'));
    const renamed = await variant((m) => m.map((x) => (x.name === 'bundle.tar.gz' ? { ...x, name: '../bundle.tar.gz' } : x)));
    await expect(readPackage(renamed)).rejects.toThrow(refused('AIRLOCK_PACKAGE_MEMBERS', '../bundle.tar.gz'));
  });
});
