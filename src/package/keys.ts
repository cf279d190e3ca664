import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { AirlockError, EXIT, UsageError, outputExists } from '../errors.js';
import { fsyncDir, readRegularFile, type FileFault } from '../util/fsx.js';

/** "sha256:<hex>" of the key's SPKI DER: what `verify` reports as the signer and what users compare. */
export function fingerprint(pub: KeyObject): string {
  const key = pub.type === 'private' ? createPublicKey(pub) : pub;
  return fingerprintDer(key.export({ type: 'spki', format: 'der' }));
}

/** fingerprint() of a public key given as its SPKI DER. */
export function fingerprintDer(spkiDer: Buffer): string {
  return 'sha256:' + createHash('sha256').update(spkiDer).digest('hex');
}

/** Create `path` exclusively (never overwrite a key) with `mode`, fsync it, and prove the mode stuck. */
async function writeNew(path: string, data: string, mode: number): Promise<void> {
  const fh = await open(path, 'wx', mode).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EEXIST') throw outputExists(path, 'refusing to overwrite a key; choose another --out');
    throw err;
  });
  try {
    // The umask can only remove bits, but a pre-set ACL or odd file system could differ: check, fix, check.
    if (((await fh.stat()).mode & 0o777) !== mode) await fh.chmod(mode);
    if (((await fh.stat()).mode & 0o777) !== mode)
      throw new AirlockError('AIRLOCK_KEY_MODE', `cannot give ${path} mode ${mode.toString(8)}`, EXIT.FAILURE, { subject: path });
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** `airlock keygen`: PREFIX.key (PKCS#8 PEM, 0600) and PREFIX.pub (SPKI PEM). Refuses to overwrite either. */
export async function generateKeyPair(prefix: string): Promise<{ keyPath: string; pubPath: string; fingerprint: string }> {
  const keyPath = resolve(`${prefix}.key`);
  const pubPath = resolve(`${prefix}.pub`);
  for (const p of [keyPath, pubPath]) {
    if (existsSync(p)) throw outputExists(p, 'refusing to overwrite a key; choose another --out');
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

/** A key file is a few hundred bytes of PEM: anything larger is not a key (and is never read whole). */
export const KEY_FILE_MAX_BYTES = 64 * 1024;

/** How a key file is named in messages: as the user gave it (`shown`), else its path. */
export interface KeyFileOptions {
  shown?: string;
  /** The option it came from ("--sign-key", "--key"). */
  flag?: string;
  /** What to do about a key file that is unusable for its content (STORE/trusted-keys/: remove or replace it). */
  advice?: string;
}

type KeyKind = 'public' | 'private';
const KEYGEN = 'airlock keygen --out PREFIX writes PREFIX.key (private) and PREFIX.pub (public)';

/** What to do about a key file that cannot be read, by the kind of problem. */
function fileAdvice(fault: FileFault, kind: KeyKind): string {
  const file = kind === 'public' ? 'PREFIX.pub' : 'PREFIX.key';
  switch (fault) {
    case 'missing':
      return `check the path; ${KEYGEN}`;
    case 'folder':
      return `give the key file itself (airlock keygen's ${file}), not its folder`;
    case 'denied':
      return 'run as a user that may read it, or give a copy this user can read';
    case 'not-regular':
    case 'too-big':
      return `a key file is a few hundred bytes of PEM: give airlock keygen's ${file}`;
    case 'unreadable':
      return 'check the file and the disk, then try again';
  }
}

/** A key file's bytes: a regular file, bounded, read without blocking (a FIFO is refused, not waited on). */
async function readKeyFile(path: string, o: KeyFileOptions, kind: KeyKind): Promise<Buffer> {
  const name = o.shown ?? path;
  return readRegularFile(path, {
    maxBytes: KEY_FILE_MAX_BYTES,
    refuse: (why, fault) => new UsageError(`${name} ${why}; ${fileAdvice(fault, kind)}`, { subject: name }),
  });
}

/** Refusals of a key file's content: `why` says what it holds, and says what to give instead. */
const refuser = (path: string, o: KeyFileOptions) => (why: string) =>
  new UsageError(`${o.shown ?? path} ${why}${o.advice ? `; ${o.advice}` : ''}`, { subject: o.shown ?? path });

/** Does this PEM text hold private key material (in any block, encrypted or not)? */
function holdsPrivateKey(text: string | Buffer): boolean {
  if (/PRIVATE KEY/.test(typeof text === 'string' ? text : text.toString('latin1'))) return true;
  try {
    createPrivateKey(text);
    return true;
  } catch (err) {
    // An encrypted private key fails for want of a passphrase: private all the same.
    return (err as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE';
  }
}

export interface PublicKeyText {
  key: KeyObject;
  /** The canonical SPKI PEM made from the parsed key: the only form written anywhere. */
  pem: string;
  /** Its SPKI DER (what the fingerprint hashes). */
  der: Buffer;
}

/** One PEM block labelled PUBLIC KEY and nothing else (whitespace around it, CRLF line ends allowed). */
const SPKI_PEM = /^\s*-----BEGIN PUBLIC KEY-----\r?\n((?:[A-Za-z0-9+/=]+\r?\n)+)-----END PUBLIC KEY-----\s*$/;
/** The SPKI DER of every Ed25519 public key: this 12-byte header, then the 32-byte key (RFC 8410). */
const ED25519_SPKI_HEADER = Buffer.from('302a300506032b6570032100', 'hex');

/** The PEM OpenSSL writes for SPKI DER (64-character lines). */
function spkiPem(der: Buffer): string {
  return `-----BEGIN PUBLIC KEY-----\n${der.toString('base64').replace(/.{64}(?=.)/g, '$&\n')}\n-----END PUBLIC KEY-----\n`;
}

const PRIVATE_GIVEN = "holds a private key; give the public key (airlock keygen's .pub file), never the private one";
const NOT_PUBLIC = `is not a PEM public key; give airlock keygen's .pub file (${KEYGEN})`;

/**
 * Parse text that must be an Ed25519 PUBLIC key: one PEM block labelled PUBLIC KEY holding exactly
 * an Ed25519 SubjectPublicKeyInfo. createPublicKey alone accepts a private key and derives its
 * public half; here anything else (a private key, a second block riding along, a relabelled
 * private key) is refused, so only a public key ever goes on to be written into a policy, a store
 * or a package: `pem` is re-made from the key's SPKI. A good key costs no OpenSSL decoder (a
 * policy is read at every import). `refuse(why)` completes "<the key> …".
 */
export function parsePublicKeyText(text: string | Buffer, refuse: (why: string) => Error): PublicKeyText {
  const m = SPKI_PEM.exec(typeof text === 'string' ? text : text.toString('latin1'));
  if (!m) throw refuse(holdsPrivateKey(text) ? PRIVATE_GIVEN : NOT_PUBLIC);
  const der = Buffer.from(m[1]!.replace(/\s/g, ''), 'base64');
  if (der.length === 44 && der.subarray(0, 12).equals(ED25519_SPKI_HEADER)) {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: der.subarray(12).toString('base64url') }, format: 'jwk' });
    return { key, pem: spkiPem(der), der };
  }
  // Not Ed25519 SPKI: say what it is.
  let key: KeyObject;
  try {
    key = createPublicKey(text);
  } catch {
    throw refuse(holdsPrivateKey(text) ? PRIVATE_GIVEN : NOT_PUBLIC);
  }
  if (key.type !== 'public' || holdsPrivateKey(text)) throw refuse(PRIVATE_GIVEN);
  if (key.asymmetricKeyType !== 'ed25519') throw refuse(`is a ${key.asymmetricKeyType ?? 'unknown'} key; airlock signs with Ed25519 only`);
  throw refuse("is not a plain SPKI public key (airlock keygen's .pub file)");
}

/** The private key in PEM text; plain words for a public key, a passphrase-protected key or anything else. */
export function parsePrivateKeyText(text: Buffer, refuse: (why: string) => Error, flag = '--sign-key'): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE')
      throw refuse("is a passphrase-protected private key; airlock needs an unencrypted PKCS#8 key (airlock keygen's .key file)");
    let isPublic = false;
    try {
      isPublic = createPublicKey(text).type === 'public';
    } catch {
      /* neither */
    }
    if (isPublic) throw refuse(`holds a public key; ${flag} needs the private .key file`);
    throw refuse(`is not a PEM private key; give airlock keygen's .key file (${KEYGEN})`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw refuse(`is a ${key.asymmetricKeyType ?? 'unknown'} key; airlock signs with Ed25519 only`);
  return key;
}

/** A private key file (`flag` names the option it came from, for the message). Exit 2 naming the file. */
export async function loadPrivateKey(path: string, o: KeyFileOptions = {}): Promise<KeyObject> {
  return parsePrivateKeyText(await readKeyFile(path, o, 'private'), refuser(path, o), o.flag);
}

/** An Ed25519 public key file; a private key, anything else or an unreadable file is exit 2 naming it. */
export async function loadPublicKey(path: string, o: KeyFileOptions = {}): Promise<KeyObject> {
  return (await loadPublicKeyText(path, o)).key;
}

/** As loadPublicKey, with the canonical SPKI PEM to write (a policy's key). */
export async function loadPublicKeyText(path: string, o: KeyFileOptions = {}): Promise<PublicKeyText> {
  return parsePublicKeyText(await readKeyFile(path, o, 'public'), refuser(path, o));
}
