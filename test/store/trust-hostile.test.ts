import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../../src/errors.js';
import { parsePrivateKeyText, parsePublicKeyText } from '../../src/package/keys.js';
import { loadPolicyChain, newPolicy, parsePolicy, trustPaths } from '../../src/store/policy.js';
import { firstDuplicateKey } from '../../src/util/json-text.js';
import { initPolicy } from '../../src/store/trust-ops.js';
import { makeTempDir } from './helpers.js';
import { pair } from '../helpers/multisig.js';

/** Unit tests for the trust layer's refusals of hostile keys, policy text and stores. */
let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('airlock-trust-hostile-');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const refuse = (why: string) => new UsageError(`the key ${why}`);

describe('public keys: a private key is never taken for one', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

  it('PKCS#8, passphrase-protected, and a private key hidden after a public one are refused', () => {
    const encrypted = privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' }) as string;
    for (const text of [pkcs8, encrypted, spki + pkcs8, pkcs8.replace(/PRIVATE KEY/g, 'PUBLIC KEY')]) {
      expect(() => parsePublicKeyText(text, refuse), text.slice(0, 40)).toThrow(/holds a private key|is not a PEM public key|is not a plain SPKI public key/);
    }
    expect(() => parsePublicKeyText(pkcs8, refuse)).toThrow('the key holds a private key');
  });

  it('an RSA key or junk is refused in words; a public key comes back as canonical SPKI PEM', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
    expect(() => parsePublicKeyText(rsa, refuse)).toThrow('is a rsa key; airlock signs with Ed25519 only');
    expect(() => parsePublicKeyText('hello', refuse)).toThrow('the key is not a PEM public key');
    expect(parsePublicKeyText(spki.replace(/\n/g, '\r\n'), refuse).pem).toBe(spki);
  });

  it('a public key where a private one belongs is named as such, without OpenSSL text', () => {
    expect(() => parsePrivateKeyText(Buffer.from(spki), refuse, '--sign-key')).toThrow('the key holds a public key; --sign-key needs the private .key file');
    expect(() => parsePrivateKeyText(Buffer.from('junk'), refuse)).toThrow(/^the key is not a PEM private key/);
  });

  it('newPolicy never writes a private key (exit 2), and parsePolicy refuses a non-canonical or private key', () => {
    expect(() => newPolicy({ keys: [{ name: 'alice', pem: pkcs8 }], threshold: 1 })).toThrow(UsageError);
    const good = newPolicy({ keys: [{ name: 'alice', pem: spki.replace(/\n/g, '\r\n') }], threshold: 1 });
    expect(parsePolicy(good).policy.keys.alice!.publicKey).toBe(spki);
    const withPrivate = Buffer.from(good.toString().replace(JSON.stringify(spki).slice(1, -1), JSON.stringify(pkcs8).slice(1, -1)));
    expect(() => parsePolicy(withPrivate, 'P')).toThrow(/P key "alice" holds a private key/);
    const crlf = Buffer.from(good.toString().replace(JSON.stringify(spki).slice(1, -1), JSON.stringify(spki.replace(/\n/g, '\r\n')).slice(1, -1)));
    expect(() => parsePolicy(crlf, 'P')).toThrow(/not written as an SPKI PEM public key alone/);
  });
});

describe('duplicate keys in policy JSON', () => {
  it('finds a key given twice in one object, decoded; keys in different objects or in strings are not duplicates', () => {
    expect(firstDuplicateKey('{"a":1,"b":{"a":2},"c":"\\"a\\":"}')).toBeNull();
    expect(firstDuplicateKey('{"a":1,"\\u0061":2}')).toBe('a');
    expect(firstDuplicateKey('{"x":[{"k":1},{"k":2,"k":3}]}')).toBe('k');
    expect(firstDuplicateKey('[{"k":"k"},{"k":"v"}]')).toBeNull();
    expect(firstDuplicateKey('{"a":{"b":1},"a":2}')).toBe('a');
  });

  it('parsePolicy refuses a duplicated key (exit 4 AIRLOCK_BAD_POLICY), never echoing the text', () => {
    const p = newPolicy({ keys: [{ name: 'alice', pem: pair().pem }], threshold: 1 }).toString();
    expect(() => parsePolicy(Buffer.from(p.replace('"serial": 1,', '"serial": 1, "serial": 2,')), 'P')).toThrow(
      expect.objectContaining({ code: 'AIRLOCK_BAD_POLICY', exitCode: 4, message: expect.stringContaining('names the key "serial" twice') }),
    );
    expect(() => parsePolicy(Buffer.from('root:x:0:0:SECRET'), 'P')).toThrow(expect.objectContaining({ message: 'P is not valid JSON' }));
  });
});

describe('the policy chain', () => {
  it('an empty chain folder with no trust init in the log is no policy (an init cut short before its line): every reader says so, and trust init starts there', async () => {
    const store = join(dir, 'empty-chain');
    await mkdir(trustPaths(store).chain, { recursive: true });
    await writeFile(join(store, 'placeholder'), '');
    expect(await loadPolicyChain(store)).toBeNull();
    await initPolicy(store, newPolicy({ keys: [{ name: 'alice', pem: pair().pem }], threshold: 1 }), []);
    expect((await loadPolicyChain(store))!.serials).toEqual([1]);
  });

  it('an expired key cannot be installed; one that expires later can', async () => {
    const bytes = newPolicy({ keys: [{ name: 'alice', pem: pair().pem, expiresAt: '2020-01-01T00:00:00.000Z' }], threshold: 1 });
    await expect(initPolicy(join(dir, 'expired'), bytes, [])).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('key "alice" expires at 2020-01-01'),
    });
    await expect(initPolicy(join(dir, 'expired'), bytes, [], { now: new Date('2019-06-01T00:00:00Z') })).resolves.toBeTruthy();
  });
});
