import type { ArchiveEntry, ArchiveFormat, ByteSource, ReadOptions } from './types.js';
import { resolveLimits } from './types.js';
import { ARCHIVE_CODES, malformed } from './errors.js';
import { detectFormat, DETECT_BYTES } from './detect.js';
import { EntryGuard } from './guard.js';
import { readHead, resolveRange, type Range } from './source.js';
import { readTar } from './tar.js';
import { readZip } from './zip.js';

export interface OpenArchive {
  format: ArchiveFormat;
  range: Range;
  entries: AsyncGenerator<ArchiveEntry>;
}

/** Resolve the range, detect the format from magic bytes, and start the right reader. */
export async function openArchive(src: ByteSource, opts: ReadOptions = {}): Promise<OpenArchive> {
  const limits = resolveLimits(opts.limits);
  const range = await resolveRange(src);
  const format = detectFormat(await readHead(range, DETECT_BYTES), range.path);
  if (opts.format && opts.format !== format) {
    throw malformed(ARCHIVE_CODES.NOT_AN_ARCHIVE, range.path, `expected a ${opts.format} archive but the bytes are ${format}`);
  }
  const guard = new EntryGuard(limits, opts.foldsCase ?? false);
  const entries = format === 'zip' ? readZip(range, guard, limits) : readTar(range, format === 'tar.gz', guard, limits);
  return { format, range, entries };
}

/**
 * Every file entry of a tar, tar.gz or zip, in archive order, each already checked against the
 * archive safety rules; folders are checked but not yielded. Read each `stream`
 * to its end before asking for the next entry (an unread stream is drained for you).
 */
export async function* readArchive(src: ByteSource, opts: ReadOptions = {}): AsyncGenerator<ArchiveEntry> {
  yield* (await openArchive(src, opts)).entries;
}
