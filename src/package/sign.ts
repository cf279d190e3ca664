import { createHash, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { DigestMismatchError, MalformedError } from '../errors.js';
import { writeDurably } from '../util/fsx.js';
import { fingerprint } from './keys.js';
import { MAX_SIGNATURES, readPackage, signatureMember } from './reader.js';
import { signersOf } from './signature.js';
import { BLOCK, encodeHeader, padded } from './tar-header.js';

const CHUNK = 1024 * 1024;

export interface SignResult {
  path: string;
  added: boolean;
  signer: string;
  signatures: number;
}

/**
 * `airlock sign PKG --key K` (trust policy, several signers): add one signature member to an existing package. The
 * manifest bytes and the archive member (header, data, padding, end blocks) are copied unchanged;
 * only the signature members between them change, so every earlier signature stays valid and
 * `openssl pkeyutl -verify -rawin` checks each. A key that already signed adds nothing (a second
 * copy would count once anyway). Atomic (writeDurably): the result is re-read before it replaces the package.
 * The archive bytes are hashed as they are copied and must still match the manifest.
 */
export async function addSignature(pkgPath: string, key: KeyObject, o: { signal?: AbortSignal } = {}): Promise<SignResult> {
  const path = resolve(pkgPath);
  const layout = await readPackage(path);
  const pub = createPublicKey(key);
  const signer = fingerprint(pub);
  if (signersOf(layout, [pub]).signers.length > 0) return { path, added: false, signer, signatures: layout.signatures.length };
  if (layout.signatures.length >= MAX_SIGNATURES) {
    throw new MalformedError('AIRLOCK_TOO_MANY_SIGNATURES', `${path} already carries ${layout.signatures.length} signatures, the limit`, {
      subject: path,
      limit: MAX_SIGNATURES,
    });
  }
  const signatures = [...layout.signatures, sign(null, layout.manifestBytes, key)];
  const mtime = new Date(Math.floor(Date.parse(layout.manifest.createdAt) / 1000) * 1000);
  const src = await open(path, 'r');
  try {
    const fileSize = (await src.stat()).size;
    await writeDurably(
      path,
      async (out) => {
        const write = async (buf: Buffer) => {
          let done = 0;
          while (done < buf.length) done += (await out.write(buf, done, buf.length - done)).bytesWritten;
        };
        const member = async (name: string, body: Buffer) => {
          await write(encodeHeader(name, body.length, mtime));
          await write(body);
          if (padded(body.length) > body.length) await write(Buffer.alloc(padded(body.length) - body.length));
        };
        await member('airlock.json', layout.manifestBytes);
        for (const [i, s] of signatures.entries()) await member(signatureMember(i + 1), s);
        // The archive member's header, data, padding and the end blocks, byte for byte.
        const from = layout.archive.offset - BLOCK;
        const h = createHash('sha256');
        const buf = Buffer.allocUnsafe(CHUNK);
        for (let pos = from; pos < fileSize;) {
          o.signal?.throwIfAborted();
          const { bytesRead } = await src.read(buf, 0, Math.min(CHUNK, fileSize - pos), pos);
          if (bytesRead === 0) throw new MalformedError('AIRLOCK_TRUNCATED', `${path} shrank while it was being signed`, { subject: path });
          const chunk = buf.subarray(0, bytesRead);
          const a = Math.max(pos, layout.archive.offset);
          const b = Math.min(pos + bytesRead, layout.archive.offset + layout.archive.size);
          if (b > a) h.update(chunk.subarray(a - pos, b - pos));
          await write(chunk);
          pos += bytesRead;
        }
        const digest = h.digest('hex');
        if (digest !== layout.manifest.archive.sha256) {
          throw new DigestMismatchError(
            'AIRLOCK_ARCHIVE_DIGEST',
            `${layout.archive.name} in ${path} has sha256 ${digest} but the manifest says ${layout.manifest.archive.sha256}; not signing it`,
            { subject: layout.archive.name },
          );
        }
      },
      {
        signal: o.signal,
        check: async (tmp) => {
          const again = await readPackage(tmp);
          if (!again.manifestBytes.equals(layout.manifestBytes) || again.signatures.length !== signatures.length) {
            throw new MalformedError('AIRLOCK_PACKAGE_CHANGED', `${path} changed while it was being signed`, { subject: path });
          }
        },
      },
    );
  } finally {
    await src.close();
  }
  return { path, added: true, signer, signatures: signatures.length };
}
