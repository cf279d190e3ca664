import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPackage } from '../../src/package/reader.js';
import { addSignature } from '../../src/package/sign.js';
import { checkSignature, signersOf } from '../../src/package/signature.js';
import { verifyPackage } from '../../src/package/verify.js';
import { fingerprint } from '../../src/package/keys.js';
import { makePackage } from '../helpers/make-package.js';
import { pair, signaturesBy, withSignatures } from '../helpers/multisig.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-multisig-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const [a, b, c] = [pair(), pair(), pair()];

describe('several signatures (trust policy, several signers)', () => {
  it('airlock sign appends members; manifest and archive bytes unchanged; openssl verifies every signature', async () => {
    const { pkgPath } = await makePackage({ outDir: join(dir, 'p1'), signKey: a.priv });
    const before = await readPackage(pkgPath);
    const bytesBefore = await readFile(pkgPath);
    expect((await addSignature(pkgPath, b.priv)).added).toBe(true);
    expect((await addSignature(pkgPath, c.priv)).signatures).toBe(3);
    const again = await addSignature(pkgPath, b.priv); // same key again: nothing added
    expect(again).toMatchObject({ added: false, signatures: 3 });
    const after = await readPackage(pkgPath);
    expect(after.manifestBytes.equals(before.manifestBytes)).toBe(true);
    expect(after.signatures).toHaveLength(3);
    expect(after.signatures[0]!.equals(before.signature!)).toBe(true); // the first member is unchanged
    const bytesAfter = await readFile(pkgPath);
    const archive = (l: typeof before, buf: Buffer) => buf.subarray(l.archive.offset, l.archive.offset + l.archive.size);
    expect(archive(after, bytesAfter).equals(archive(before, bytesBefore))).toBe(true);

    const x = join(dir, 'x1');
    await mkdir(x);
    execFileSync('tar', ['-xf', pkgPath, '-C', x]);
    const members = ['airlock.json.sig', 'airlock.json.sig.2', 'airlock.json.sig.3'];
    for (const [i, k] of [a, b, c].entries()) {
      await writeFile(join(x, `k${i}.pub`), k.pem);
      const r = spawnSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', `k${i}.pub`, '-rawin', '-in', 'airlock.json', '-sigfile', members[i]!], {
        cwd: x,
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('Signature Verified Successfully');
    }
    const report = await verifyPackage(pkgPath, { trust: [b.pub, c.pub] });
    expect(report.signers).toEqual([fingerprint(b.pub), fingerprint(c.pub)].sort());
    // A single-signed package written before several signers existed still verifies as before.
    const { pkgPath: old } = await makePackage({ outDir: join(dir, 'p1-old'), signKey: a.priv });
    expect((await verifyPackage(old, { trust: [a.pub] })).signer).toBe(fingerprint(a.pub));
  });

  it('duplicate signatures by one key count once', async () => {
    const { pkgPath } = await makePackage({ outDir: join(dir, 'p2') });
    const [sa] = await signaturesBy(pkgPath, [a.priv]);
    const dup = join(dir, 'dup.airlock');
    await withSignatures(pkgPath, dup, [sa!, sa!, sa!]);
    const l = await readPackage(dup);
    expect(l.signatures).toHaveLength(3);
    expect(signersOf(l, [a.pub, b.pub])).toEqual({ signers: [fingerprint(a.pub)], unknown: 0 });
    expect(checkSignature(l, { trust: [a.pub] }).signers).toHaveLength(1);
  });

  it('a signature member of the wrong length is refused (exit 4) naming it', async () => {
    const { pkgPath } = await makePackage({ outDir: join(dir, 'p3') });
    const [sa] = await signaturesBy(pkgPath, [a.priv]);
    const bad = join(dir, 'short.airlock');
    await withSignatures(pkgPath, bad, [sa!, Buffer.alloc(63)]);
    await expect(readPackage(bad)).rejects.toMatchObject({ code: 'AIRLOCK_BAD_SIGNATURE', exitCode: 4, details: { subject: 'airlock.json.sig.2' } });
  });

  it('thousands of signature members are refused after the 32nd, without reading them all', async () => {
    const { pkgPath } = await makePackage({ outDir: join(dir, 'p4') });
    const [sa] = await signaturesBy(pkgPath, [a.priv]);
    const many = join(dir, 'many.airlock');
    await withSignatures(
      pkgPath,
      many,
      Array.from({ length: 2000 }, () => sa!),
    );
    await expect(readPackage(many)).rejects.toMatchObject({ code: 'AIRLOCK_TOO_MANY_SIGNATURES', exitCode: 4, details: { subject: 'airlock.json.sig.33' } });
    const ok32 = join(dir, 'ok32.airlock');
    await withSignatures(
      pkgPath,
      ok32,
      Array.from({ length: 32 }, () => sa!),
    );
    expect((await readPackage(ok32)).signatures).toHaveLength(32);
    await expect(addSignature(ok32, b.priv)).rejects.toMatchObject({ code: 'AIRLOCK_TOO_MANY_SIGNATURES', exitCode: 4 });
  });

  it('signature members out of order or misnamed are refused', async () => {
    const { pkgPath } = await makePackage({ outDir: join(dir, 'p5') });
    const [sa, sb] = await signaturesBy(pkgPath, [a.priv, b.priv]);
    const bad = join(dir, 'order.airlock');
    await withSignatures(pkgPath, bad, [sa!, sb!], ['airlock.json.sig', 'airlock.json.sig.3']);
    await expect(readPackage(bad)).rejects.toMatchObject({ code: 'AIRLOCK_PACKAGE_MEMBERS', exitCode: 4 });
    await withSignatures(pkgPath, bad, [sb!], ['airlock.json.sig.2']);
    await expect(readPackage(bad)).rejects.toMatchObject({ exitCode: 4 });
  });

  it("a stranger's extra signature is ignored once a trusted key verifies; tampering breaks them all", async () => {
    const { pkgPath } = await makePackage({ outDir: join(dir, 'p6'), signKey: c.priv });
    await addSignature(pkgPath, a.priv);
    expect(checkSignature(await readPackage(pkgPath), { trust: [a.pub] }).signers).toEqual([fingerprint(a.pub)]);
    const l = await readPackage(pkgPath);
    const tampered = { ...l, manifestBytes: Buffer.concat([l.manifestBytes, Buffer.from(' ')]) };
    expect(() => checkSignature(tampered, { trust: [a.pub, c.pub] })).toThrow(expect.objectContaining({ code: 'AIRLOCK_UNTRUSTED_SIGNATURE' }));
  });
});
