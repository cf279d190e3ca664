import { createReadStream, createWriteStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { spanStream } from '../archive/index.js';
import type { PackageInput } from '../package/index.js';
import type { ProgressEvent } from './progress.js';
import { gcPacer } from '../util/gc.js';
import { fsyncFile } from '../util/fsx.js';

export interface CopyDigests {
  packageSha256: string;
  archiveSha256: string;
}

/**
 * Copy the package byte for byte in one read of the source, hashing on the way both the whole
 * file and the archive member's bytes [offset, offset + size): the archive digest is known before
 * a single site file is extracted. `signal` stops the copy (the partial file is the caller's).
 */
export async function copyHashed(
  src: PackageInput,
  dest: string,
  total: number,
  archive: { offset: number; size: number },
  o: { signal?: AbortSignal; onProgress?: (e: ProgressEvent) => void } = {},
): Promise<CopyDigests> {
  const whole = createHash('sha256');
  const member = createHash('sha256');
  const end = archive.offset + archive.size;
  let bytes = 0;
  let reported = 0;
  const spent = gcPacer(); // the 1 MiB chunks are garbage at once; without it they pile up to tens of MB (util/gc.ts)
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      whole.update(chunk);
      const from = Math.max(archive.offset, bytes);
      const to = Math.min(end, bytes + chunk.length);
      if (to > from) member.update(chunk.subarray(from - bytes, to - bytes));
      bytes += chunk.length;
      spent(chunk.length);
      if (bytes - reported >= 64 * 1024 * 1024 || bytes === total) {
        reported = bytes;
        o.onProgress?.({ phase: 'copy', bytes, total });
      }
      cb(null, chunk);
    },
  });
  const input = typeof src === 'string' ? createReadStream(src, { highWaterMark: 1 << 20 }) : spanStream(src.spans, 0, total);
  await pipeline(input, tap, createWriteStream(dest, { flags: 'wx' }), { signal: o.signal });
  await fsyncFile(dest);
  return { packageSha256: whole.digest('hex'), archiveSha256: member.digest('hex') };
}
