import type { FileHandle } from 'node:fs/promises';
import { MalformedError, UsageError } from '../errors.js';
import { describeFsError, openRegularFile } from '../util/fsx.js';
import { escapeControls } from '../util/terminal.js';
import { SpanFile, type FileSpan } from '../archive/index.js';
import { ARCHIVE_NAMES, MANIFEST_BOUNDS, parseManifest, type Manifest } from './manifest.js';
import { BLOCK, MAX_TAIL, MIN_TAIL, checkTail, decodeHeader, padded } from './tar-header.js';
import { sniff } from './sniff.js';
import { MAX_VENDOR_FILES, checkVendorMembers, verifyVendored } from './vendor.js';

export interface PackageLayout {
  manifest: Manifest;
  manifestBytes: Buffer;
  /** The first signature (airlock.json.sig), kept for callers that know only one. */
  signature: Buffer | null;
  /** Every signature member in order: airlock.json.sig, airlock.json.sig.2, … (at most MAX_SIGNATURES). */
  signatures: Buffer[];
  /** offset/size: the archive member's data inside the package file. */
  archive: { name: string; offset: number; size: number };
  /** The vendored members after the archive, exactly as the manifest's `vendor` lists them (empty without). */
  vendor: Array<{ name: string; offset: number; size: number }>;
}

/**
 * Where a package's bytes are: one `.airlock` file, or (split into volumes, src/package/volumes)
 * the volumes' payloads read in place as one logical file; `path` then names it in messages.
 */
export type PackageInput = string | { path: string; spans: readonly FileSpan[] };
export const inputPath = (p: PackageInput): string => (typeof p === 'string' ? p : p.path);
/** The ByteSource of bytes [offset, offset + length) of a package, wherever they lie. */
export const inputRange = (p: PackageInput, offset: number, length: number) =>
  typeof p === 'string' ? { path: p, offset, length } : { path: p.path, offset, length, spans: p.spans };

const MISSING = describeFsError({ code: 'ENOENT' });

/**
 * A package or volume file a user gave (or a volume found beside one), opened for positional
 * reads: a regular file only, never waited on (a FIFO) or read forever (a device); anything else
 * is refused in words naming it (exit 2): "package P is a FIFO (named pipe), not a regular file".
 */
export function openInputFile(path: string, what: string): Promise<FileHandle> {
  return openRegularFile(
    path,
    (why) => new UsageError(`${what} ${path} ${why}`, { subject: path }, why === MISSING ? 'AIRLOCK_NO_SUCH_FILE' : 'AIRLOCK_NOT_A_FILE'),
  );
}

interface Handle {
  read(b: Buffer, o: number, l: number, p: number): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number; isFile(): boolean }>;
  close(): Promise<void>;
}

/** The manifest size bound (MANIFEST_BOUNDS says how it is set), checked on the tar header before a byte is read. */
export const MAX_MANIFEST_BYTES = MANIFEST_BOUNDS.maxBytes;
export const SIGNATURE_BYTES = 64;
/** A package carries at most this many signatures: thousands of members are refused, not read. */
export const MAX_SIGNATURES = 32;
/** The name of the n-th signature member (1-based): the first keeps its historical name. */
export const signatureMember = (n: number): string => (n === 1 ? 'airlock.json.sig' : `airlock.json.sig.${n}`);
const isSignatureName = (name: string): boolean => name === 'airlock.json.sig' || /^airlock\.json\.sig\.\d{1,6}$/.test(name);

async function readAt(fh: Handle, position: number, length: number, fileSize: number, subject: string): Promise<Buffer> {
  if (position + length > fileSize) {
    throw new MalformedError(
      'AIRLOCK_TRUNCATED',
      `package is truncated: ${subject} needs bytes ${position}..${position + length} but the file has ${fileSize}`,
      { subject },
    );
  }
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) throw new MalformedError('AIRLOCK_TRUNCATED', `package is truncated while reading ${subject}`, { subject });
    done += bytesRead;
  }
  return buf;
}

/**
 * Read the layout of a `.airlock` package (the package format) from its tar headers, the
 * manifest and the signature only: the archive body is never read here (it may be gigabytes; it is
 * hashed once, in place, by verify). Members must be exactly airlock.json, airlock.json.sig
 * then airlock.json.sig.2 … .32 (optional), bundle.<ext>, in that order, followed by nothing but the tar end blocks.
 */
export async function readPackage(input: PackageInput): Promise<PackageLayout> {
  return readLayout(input).catch((err: unknown) => {
    throw namedPackage(err, inputPath(input));
  });
}

/**
 * A refusal of the package's structure names the package's file: a command given two packages
 * (delta, fetch --base) must say which one is truncated or garbled.
 */
function namedPackage(err: unknown, path: string): unknown {
  if (!(err instanceof MalformedError) || err.message.includes(path)) return err;
  const shown = escapeControls(path);
  err.message = err.message.startsWith('package ') ? `package ${shown} ${err.message.slice('package '.length)}` : `package ${shown}: ${err.message}`;
  return err;
}

async function readLayout(input: PackageInput): Promise<PackageLayout> {
  const path = inputPath(input);
  const fh: Handle = typeof input === 'string' ? await openInputFile(path, 'package') : await SpanFile.open(input.spans);
  try {
    const fileSize = (await fh.stat()).size;
    let pos = 0;
    const next = async (expected: string) => {
      const h = decodeHeader(
        await readAt(fh, pos, BLOCK, fileSize, `the ${expected} header`).catch((e: unknown) => {
          if (fileSize === pos)
            throw new MalformedError('AIRLOCK_TRUNCATED', `package is truncated: it ends at byte ${pos} where ${expected} should start`, { subject: expected });
          throw e;
        }),
        pos,
        expected,
      );
      const offset = pos + BLOCK;
      pos = offset + padded(h.size);
      return { ...h, offset };
    };

    refuseExportArchive(await readAt(fh, 0, Math.min(BLOCK, fileSize), fileSize, 'the first block'), path);
    const first = await next('airlock.json');
    if (first.name !== 'airlock.json') throw membersError(`the first member is ${JSON.stringify(first.name)}, not airlock.json`, first.name);
    if (first.size > MAX_MANIFEST_BYTES)
      throw new MalformedError('AIRLOCK_BAD_MANIFEST', `airlock.json is ${first.size} bytes (limit ${MAX_MANIFEST_BYTES})`, { subject: 'airlock.json' });
    const manifestBytes = await readAt(fh, first.offset, first.size, fileSize, 'airlock.json');

    let member = await next('the archive member (bundle.tar.gz, bundle.tar or bundle.zip)');
    const signatures: Buffer[] = [];
    while (isSignatureName(member.name)) {
      const n = signatures.length + 1;
      if (n > MAX_SIGNATURES) {
        throw new MalformedError(
          'AIRLOCK_TOO_MANY_SIGNATURES',
          `package has more than ${MAX_SIGNATURES} signature members (at ${JSON.stringify(member.name)}); the limit is ${MAX_SIGNATURES}`,
          { subject: member.name, limit: MAX_SIGNATURES },
        );
      }
      if (member.name !== signatureMember(n)) {
        throw membersError(`signature member ${JSON.stringify(member.name)} is out of order: expected ${signatureMember(n)}`, member.name);
      }
      if (member.size !== SIGNATURE_BYTES)
        throw new MalformedError('AIRLOCK_BAD_SIGNATURE', `${member.name} is ${member.size} bytes; an Ed25519 signature is ${SIGNATURE_BYTES}`, {
          subject: member.name,
        });
      signatures.push(await readAt(fh, member.offset, SIGNATURE_BYTES, fileSize, member.name));
      member = await next('bundle.<ext>');
    }
    const signature = signatures[0] ?? null;
    if (!(member.name in ARCHIVE_NAMES)) {
      throw membersError(`unexpected member ${JSON.stringify(member.name)} where the bundle (${Object.keys(ARCHIVE_NAMES).join(', ')}) should be`, member.name);
    }
    if (member.offset + member.size > fileSize) {
      throw new MalformedError(
        'AIRLOCK_TRUNCATED',
        `package is truncated: ${member.name} needs ${member.size} bytes but the file ends ${fileSize - member.offset} bytes into it`,
        { subject: member.name },
      );
    }
    const archiveMember = member;
    // Vendored members follow the bundle (headers only here; their bytes are hashed by verifyVendored).
    const vendor: Array<{ name: string; offset: number; size: number }> = [];
    while (fileSize - pos >= BLOCK) {
      const block = await readAt(fh, pos, BLOCK, fileSize, 'the member after the bundle');
      if (block.every((b) => b === 0)) break;
      let name: string;
      try {
        name = decodeHeader(block, pos, 'vendor/').name;
      } catch {
        break; // junk: named below by the tail check
      }
      if (!name.startsWith('vendor/')) break;
      if (vendor.length >= MAX_VENDOR_FILES) {
        throw new MalformedError('AIRLOCK_VENDOR_LIMIT', `package has more than ${MAX_VENDOR_FILES} vendored members (at ${JSON.stringify(name)})`, {
          subject: name,
          limit: MAX_VENDOR_FILES,
        });
      }
      member = await next('vendor/');
      if (member.offset + member.size > fileSize) {
        throw new MalformedError(
          'AIRLOCK_TRUNCATED',
          `package is truncated: ${member.name} needs ${member.size} bytes but the file ends ${fileSize - member.offset} bytes into it`,
          { subject: member.name },
        );
      }
      vendor.push({ name: member.name, offset: member.offset, size: member.size });
    }
    const tailLength = fileSize - pos;
    if (tailLength < MIN_TAIL)
      throw new MalformedError('AIRLOCK_TRUNCATED', `package is truncated: the tar end blocks after ${member.name} are missing`, { subject: member.name });
    if (tailLength > MAX_TAIL || tailLength % BLOCK !== 0) {
      // A fourth member (or trailing junk): name it when it is a header we can read.
      const extra = await readAt(fh, pos, BLOCK, fileSize, 'trailer');
      if (!extra.every((b) => b === 0)) throw extraMember(extra, pos, member.name);
      throw membersError(`package has ${tailLength} bytes after ${member.name}; only the tar end blocks may follow`, `byte ${pos}`);
    }
    const tail = await readAt(fh, pos, tailLength, fileSize, 'the tar end blocks');
    if (!tail.subarray(0, BLOCK).every((b) => b === 0)) {
      throw extraMember(tail, pos, member.name);
    }
    checkTail(tail, pos);

    const manifest = parseManifest(manifestBytes);
    if (manifest.archive.name !== archiveMember.name) {
      throw new MalformedError(
        'AIRLOCK_PACKAGE_MEMBERS',
        `the manifest names the archive ${manifest.archive.name} but the package holds ${archiveMember.name}`,
        { subject: archiveMember.name },
      );
    }
    checkVendorMembers(manifest.vendor ?? [], vendor);
    return {
      manifest,
      manifestBytes,
      signature,
      signatures,
      archive: { name: archiveMember.name, offset: archiveMember.offset, size: archiveMember.size },
      vendor,
    };
  } finally {
    await fh.close();
  }
}

/** The most common mistake: the export archive itself instead of a package made from it. */
function refuseExportArchive(head: Buffer, path: string): void {
  const s = sniff(head);
  if (s.kind !== 'archive') return;
  throw new MalformedError(
    'AIRLOCK_NOT_A_PACKAGE',
    `${path} is an export archive (${s.format}), not an .airlock package; turn it into one with \`airlock pack ${path} --domain D\` (D: the site's domain)`,
    { subject: path, format: s.format },
  );
}

function membersError(message: string, subject: string): MalformedError {
  return new MalformedError(
    'AIRLOCK_PACKAGE_MEMBERS',
    `${message}; a package holds airlock.json, airlock.json.sig, airlock.json.sig.2 … (optional, at most 32), bundle.<ext> and the vendor/… files its manifest lists (optional), in that order`,
    { subject },
  );
}

/** A fourth member after the bundle: named when its header decodes, else the byte where junk starts. */
function extraMember(block: Buffer, pos: number, after: string): MalformedError {
  let name: string;
  try {
    name = decodeHeader(block, pos, 'trailer').name;
  } catch {
    return membersError(`package has data after ${after} (byte ${pos}) that is not the tar end blocks`, `byte ${pos}`);
  }
  return membersError(`unexpected member ${JSON.stringify(name)} after ${after}`, name);
}

/** Bytes [offset, offset + length) of a package (a vendored member: bounded by the caller). */
export async function readPackageRange(input: PackageInput, offset: number, length: number): Promise<Buffer> {
  const fh: Handle = typeof input === 'string' ? await openInputFile(input, 'package') : await SpanFile.open(input.spans);
  try {
    return await readAt(fh, offset, length, (await fh.stat()).size, `bytes ${offset}..${offset + length}`);
  } finally {
    await fh.close();
  }
}

/** Every vendored member of `input`, hashed and compared with its manifest. */
export async function verifyVendorMembers(
  input: PackageInput,
  layout: Pick<PackageLayout, 'manifest' | 'vendor'>,
  onFile?: Parameters<typeof verifyVendored>[3],
): Promise<void> {
  if (!layout.manifest.vendor && layout.vendor.length === 0) return;
  await verifyVendored((o, l) => readPackageRange(input, o, l), layout.manifest, layout.vendor, onFile);
}
