import { createHash, sign, type KeyObject } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { DigestMismatchError, MalformedError, UsageError, outputExists } from '../errors.js';
import { writeDurably } from '../util/fsx.js';
import { MANIFEST_BOUNDS, ManifestSchema, serializeManifest, type Manifest } from './manifest.js';
import { MIN_TAIL, encodeHeader, padded } from './tar-header.js';
import { describeZodError } from '../upstream/describe.js';

const CHUNK = 1024 * 1024;

/** Writes and hashes the package bytes in one pass. */
class Out {
  readonly hash = createHash('sha256');
  constructor(private readonly fh: FileHandle) {}
  async write(buf: Buffer): Promise<void> {
    this.hash.update(buf);
    let done = 0;
    while (done < buf.length) done += (await this.fh.write(buf, done, buf.length - done)).bytesWritten;
  }
  async member(name: string, size: number, mtime: Date, body: () => Promise<void>): Promise<void> {
    await this.write(encodeHeader(name, size, mtime));
    await body();
    if (padded(size) > size) await this.write(Buffer.alloc(padded(size) - size));
  }
}

/** Copy the archive into the package, checking its sha256 and size against the manifest on the way. */
async function copyArchive(out: Out, archivePath: string, manifest: Manifest, signal?: AbortSignal): Promise<void> {
  const src = await open(archivePath, 'r');
  try {
    const h = createHash('sha256');
    const buf = Buffer.allocUnsafe(CHUNK);
    let total = 0;
    for (;;) {
      signal?.throwIfAborted();
      const { bytesRead } = await src.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      h.update(chunk);
      total += bytesRead;
      if (total > manifest.archive.size) break;
      await out.write(chunk);
    }
    const digest = h.digest('hex');
    // The archive was scanned before; if it changed since (or the caller mixed up files), stop here.
    if (total !== manifest.archive.size || digest !== manifest.archive.sha256) {
      throw new DigestMismatchError(
        'AIRLOCK_ARCHIVE_CHANGED',
        `${archivePath} no longer matches the manifest (size ${total} vs ${manifest.archive.size}, sha256 ${digest} vs ${manifest.archive.sha256})`,
        { subject: archivePath },
      );
    }
  } finally {
    await src.close();
  }
}

/**
 * Write a `.airlock` package (the package format): members airlock.json, airlock.json.sig
 * (when signKey is given), bundle.<ext>, then the two tar end blocks. Atomic (writeDurably): a
 * crash leaves the old file or the complete new one.
 * `exclusive`: never replace an existing outPath (AIRLOCK_EXISTS, exit 2), even one created while we wrote.
 */
export async function writePackage(o: {
  outPath: string;
  manifest: Manifest;
  archivePath: string;
  signKey?: KeyObject;
  exclusive?: boolean;
  /** Vendoring: the bytes of each file the manifest's `vendor` lists, by its member path. */
  vendorBytes?: ReadonlyMap<string, Buffer>;
  /** A stop asked for: the write is dropped, unless the package already has its name (writeDurably). */
  signal?: AbortSignal;
}): Promise<{ path: string; sha256: string }> {
  const checked = ManifestSchema.safeParse(o.manifest);
  if (!checked.success) throw new UsageError(`refusing to write an invalid manifest: ${describeZodError(checked.error)}`, { subject: 'airlock.json' });
  const manifestBytes = serializeManifest(o.manifest);
  // A site within the archive limits can still list more path bytes than a manifest may hold
  // (MANIFEST_BOUNDS): a package no reader would accept is refused here, before a byte is written.
  if (manifestBytes.length > MANIFEST_BOUNDS.maxBytes) {
    throw new MalformedError(
      'AIRLOCK_BAD_MANIFEST',
      `airlock.json would be ${manifestBytes.length} bytes, more than the limit of ${MANIFEST_BOUNDS.maxBytes} that verify and import accept: the site's ${o.manifest.files.length} paths are too long for one package`,
      { subject: 'airlock.json', limit: MANIFEST_BOUNDS.maxBytes, actual: manifestBytes.length },
    );
  }
  const signature = o.signKey ? sign(null, manifestBytes, o.signKey) : null;
  const mtime = new Date(Math.floor(Date.parse(o.manifest.createdAt) / 1000) * 1000);

  const sha256 = await writeDurably(
    o.outPath,
    async (fh) => {
      const out = new Out(fh);
      await out.member('airlock.json', manifestBytes.length, mtime, () => out.write(manifestBytes));
      if (signature) await out.member('airlock.json.sig', signature.length, mtime, () => out.write(signature));
      await out.member(o.manifest.archive.name, o.manifest.archive.size, mtime, () => copyArchive(out, o.archivePath, o.manifest, o.signal));
      for (const r of o.manifest.vendor ?? []) {
        const bytes = o.vendorBytes?.get(r.path);
        if (!bytes || bytes.length !== r.size || createHash('sha256').update(bytes).digest('hex') !== r.sha256) {
          throw new UsageError(`refusing to write a package: vendored file ${r.path} does not match its manifest record`, { subject: r.path });
        }
        await out.member(r.path, r.size, mtime, () => out.write(bytes));
      }
      await out.write(Buffer.alloc(MIN_TAIL));
      return out.hash.digest('hex');
    },
    { exclusive: o.exclusive, signal: o.signal },
  );
  return { path: o.outPath, sha256 };
}

/** The rule for every output (exit 2, AIRLOCK_EXISTS) lives with the errors; re-exported for the writers. */
export { outputExists };

export { publishNew } from '../util/fsx.js';
