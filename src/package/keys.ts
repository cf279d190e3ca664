import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { open, readFile, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { AirlockError, EXIT, UsageError } from '../errors.js';
import { fsyncDir } from '../util/fsx.js';

/** "sha256:<hex>" of the key's SPKI DER: what `verify` reports as the signer and what users compare. */
export function fingerprint(pub: KeyObject): string {
  const key = pub.type === 'private' ? createPublicKey(pub) : pub;
  return 'sha256:' + createHash('sha256').update(key.export({ type: 'spki', format: 'der' })).digest('hex');
}

/** Create `path` exclusively (never overwrite a key) with `mode`, fsync it, and prove the mode stuck. */
async function writeNew(path: string, data: string, mode: number): Promise<void> {
  const fh = await open(path, 'wx', mode).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EEXIST') throw new UsageError(`${path} already exists; refusing to overwrite a key`, { subject: path });
    throw err;
  });
  try {
    // The umask can only remove bits, but a pre-set ACL or odd file system could differ: check, fix, check.
    if (((await fh.stat()).mode & 0o777) !== mode) await fh.chmod(mode);
    if (((await fh.stat()).mode & 0o777) !== mode) throw new AirlockError('AIRLOCK_KEY_MODE', `cannot give ${path} mode ${mode.toString(8)}`, EXIT.FAILURE, { subject: path });
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** CONTRACT `keygen`: PREFIX.key (PKCS#8 PEM, 0600) and PREFIX.pub (SPKI PEM). Refuses to overwrite either. */
export async function generateKeyPair(prefix: string): Promise<{ keyPath: string; pubPath: string; fingerprint: string }> {
  const keyPath = resolve(`${prefix}.key`);
  const pubPath = resolve(`${prefix}.pub`);
  for (const p of [keyPath, pubPath]) {
    if (existsSync(p)) throw new UsageError(`${p} already exists; refusing to overwrite a key`, { subject: p });
  }
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  await writeNew(keyPath, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 0o600);
  try {
    await writeNew(pubPath, publicKey.export({ type: 'spki', format: 'pem' }) as string, 0o644);
  } catch (err) {
    await rm(keyPath, { force: true }); // no half pair left behind
    throw err;
  }
  await fsyncDir(dirname(keyPath));
  if (dirname(pubPath) !== dirname(keyPath)) await fsyncDir(dirname(pubPath));
  return { keyPath, pubPath, fingerprint: fingerprint(publicKey) };
}

async function readKeyFile(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new UsageError(`cannot read key file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { subject: path });
  }
}

function requireEd25519(key: KeyObject, path: string): KeyObject {
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new UsageError(`${path} is a ${key.asymmetricKeyType ?? 'unknown'} key; airlock signs with Ed25519 only`, { subject: path });
  }
  return key;
}

export async function loadPrivateKey(path: string): Promise<KeyObject> {
  const pem = await readKeyFile(path);
  try {
    return requireEd25519(createPrivateKey(pem), path);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${path} is not a PEM private key: ${(err as Error).message}`, { subject: path });
  }
}

export async function loadPublicKey(path: string): Promise<KeyObject> {
  const pem = await readKeyFile(path);
  if (pem.includes('PRIVATE KEY')) throw new UsageError(`${path} holds a private key; give the .pub file`, { subject: path });
  try {
    return requireEd25519(createPublicKey(pem), path);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${path} is not a PEM public key: ${(err as Error).message}`, { subject: path });
  }
}
