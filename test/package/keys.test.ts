import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint, generateKeyPair, loadPrivateKey, loadPublicKey } from '../../src/package/keys.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-keys-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('keys', () => {
  it('writes a PKCS#8 private key with mode 0600 and an SPKI public key that belong together', async () => {
    const r = await generateKeyPair(join(dir, 'signer'));
    expect((await stat(r.keyPath)).mode & 0o777).toBe(0o600);
    expect(await readFile(r.keyPath, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(await readFile(r.pubPath, 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const priv = await loadPrivateKey(r.keyPath);
    const pub = await loadPublicKey(r.pubPath);
    const sig = sign(null, Buffer.from('hello'), priv);
    expect(verify(null, Buffer.from('hello'), pub, sig)).toBe(true);
    expect(r.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(fingerprint(pub)).toBe(r.fingerprint);
    expect(fingerprint(priv)).toBe(r.fingerprint);
  });

  it('refuses to overwrite an existing key file and leaves it intact', async () => {
    await writeFile(join(dir, 'k.pub'), 'precious');
    await expect(generateKeyPair(join(dir, 'k'))).rejects.toMatchObject({ exitCode: 2, details: { subject: join(dir, 'k.pub') } });
    expect(await readFile(join(dir, 'k.pub'), 'utf8')).toBe('precious');
    await expect(stat(join(dir, 'k.key'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses non-Ed25519 keys, a private key given as trust, and garbage, naming the file', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    await writeFile(join(dir, 'rsa.pub'), rsa.publicKey.export({ type: 'spki', format: 'pem' }));
    await expect(loadPublicKey(join(dir, 'rsa.pub'))).rejects.toThrow(/rsa key; airlock signs with Ed25519 only/);
    const ed = await generateKeyPair(join(dir, 'ed'));
    await expect(loadPublicKey(ed.keyPath)).rejects.toThrow(/holds a private key/);
    await writeFile(join(dir, 'junk.pub'), 'not a key');
    await expect(loadPublicKey(join(dir, 'junk.pub'))).rejects.toMatchObject({ exitCode: 2, details: { subject: join(dir, 'junk.pub') } });
    await expect(loadPrivateKey(join(dir, 'missing.key'))).rejects.toMatchObject({ exitCode: 2 });
  });
});
