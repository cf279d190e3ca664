import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { readPackage } from '../../src/package/reader.js';
import { BLOCK, MIN_TAIL, encodeHeader, padded } from '../../src/package/tar-header.js';

/** Test helper (several signers): Ed25519 key pairs and packages with hand-made signature members. */
export interface Pair {
  priv: KeyObject;
  pub: KeyObject;
  pem: string;
}
export function pair(): Pair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { priv: privateKey, pub: publicKey, pem: publicKey.export({ type: 'spki', format: 'pem' }) as string };
}

const member = (name: string, body: Buffer): Buffer =>
  Buffer.concat([encodeHeader(name, body.length, new Date(0)), body, Buffer.alloc(padded(body.length) - body.length)]);

/**
 * Rewrite `pkg` (a valid package) as `out` with exactly these signature members (names default to
 * airlock.json.sig, airlock.json.sig.2, …), independent of src/package/sign.ts.
 */
export async function withSignatures(pkg: string, out: string, bodies: Buffer[], names?: string[]): Promise<void> {
  const l = await readPackage(pkg);
  const bytes = await readFile(pkg);
  const archive = bytes.subarray(l.archive.offset, l.archive.offset + l.archive.size);
  const parts = [member('airlock.json', l.manifestBytes)];
  bodies.forEach((b, i) => parts.push(member(names?.[i] ?? (i === 0 ? 'airlock.json.sig' : `airlock.json.sig.${i + 1}`), b)));
  parts.push(member(l.archive.name, Buffer.from(archive)), Buffer.alloc(MIN_TAIL));
  await writeFile(out, Buffer.concat(parts));
  void BLOCK;
}

/** The manifest bytes of a package signed by each key. */
export async function signaturesBy(pkg: string, keys: KeyObject[]): Promise<Buffer[]> {
  const l = await readPackage(pkg);
  return keys.map((k) => sign(null, l.manifestBytes, k));
}
