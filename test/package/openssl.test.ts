import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, loadPrivateKey, loadPublicKey } from '../../src/package/keys.js';
import { verifyPackage } from '../../src/package/verify.js';
import { makePackage } from '../helpers/make-package.js';

/** The signature "verifies with stock OpenSSL" — checked against the real openssl binary. */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-openssl-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const openssl = (args: string[], cwd: string) => spawnSync('openssl', args, { cwd, encoding: 'utf8' });

describe('openssl interop', () => {
  it('openssl pkeyutl -verify -rawin accepts our signature and rejects it on a changed manifest', async () => {
    const keys = await generateKeyPair(join(dir, 'ours'));
    const { pkgPath } = await makePackage({ outDir: join(dir, 'ours-pkg'), signKey: keys.keyPath });
    const x = join(dir, 'ours-x');
    await mkdir(x);
    execFileSync('tar', ['-xf', pkgPath, '-C', x]);
    const args = ['pkeyutl', '-verify', '-pubin', '-inkey', keys.pubPath, '-rawin', '-in', 'airlock.json', '-sigfile', 'airlock.json.sig'];
    const ok = openssl(args, x);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('Signature Verified Successfully');
    await writeFile(join(x, 'airlock.json'), '{"tampered":true}');
    expect(openssl(args, x).status).not.toBe(0);
  });

  it('accepts a package whose key and signature openssl made and GNU tar assembled', async () => {
    const w = join(dir, 'theirs');
    await mkdir(w);
    expect(openssl(['genpkey', '-algorithm', 'ed25519', '-out', 'k.pem'], w).status).toBe(0);
    expect(openssl(['pkey', '-in', 'k.pem', '-pubout', '-out', 'k.pub'], w).status).toBe(0);
    const { pkgPath } = await makePackage({ outDir: join(w, 'src') }); // unsigned
    execFileSync('tar', ['-xf', pkgPath, '-C', w]);
    const signed = openssl(['pkeyutl', '-sign', '-inkey', 'k.pem', '-rawin', '-in', 'airlock.json', '-out', 'airlock.json.sig'], w);
    expect(signed.status, signed.stderr).toBe(0);
    const out = join(w, 'openssl.airlock');
    execFileSync('tar', ['--format=ustar', '-cf', out, 'airlock.json', 'airlock.json.sig', 'bundle.tar.gz'], { cwd: w });
    const pub = await loadPublicKey(join(w, 'k.pub'));
    const r = await verifyPackage(out, { trust: [pub] });
    expect(r.signed).toBe(true);
    // and openssl's PKCS#8 private key loads as a signing key
    expect((await loadPrivateKey(join(w, 'k.pem'))).asymmetricKeyType).toBe('ed25519');
  });
});
