import { finished } from 'node:stream/promises';
import type { ArchiveEntry, ArchiveLimits } from './types.js';
import { RATIO_FLOOR_BYTES } from './types.js';
import type { EntryGuard } from './guard.js';
import { ARCHIVE_CODES, malformed, unsafe } from './errors.js';
import { openRange, readAt, type Range } from './source.js';
import { parseZipEnd, ZIP_TAIL_BYTES } from './zip-end.js';
import { parseCentralDirectory, type CdEntry } from './zip-cd.js';
import { checkLocalHeader, checkSupported, localLengths, LOCAL_FIXED } from './zip-local.js';
import { zipEntryStream } from './zip-entry.js';

/** Central directories bigger than this are refused before being read into memory. */
const MAX_CD_BYTES = 64 * 1024 * 1024;

/**
 * Zip entries come from the central directory (the authoritative list), every rule is applied
 * to all of them before a single byte of data is read, then each entry is read in place in file
 * order with its local header cross-checked. Never unzipper's Extract (prefix-test containment,
 * silently skipped entries).
 */
export async function* readZip(r: Range, guard: EntryGuard, limits: ArchiveLimits): AsyncGenerator<ArchiveEntry> {
  const fh = await openRange(r);
  try {
    const tailLen = Math.min(r.length, ZIP_TAIL_BYTES);
    const end = parseZipEnd(await readAt(fh, r, r.length - tailLen, tailLen, r.path), r.length - tailLen, r.path);
    if (end.cdSize > MAX_CD_BYTES) throw malformed(ARCHIVE_CODES.UNSUPPORTED, r.path, `central directory of ${end.cdSize} bytes is too large`);
    // Past maxFiles + 1 records there is nothing to learn: the guard refuses that record by name.
    const count = Math.min(end.entries, limits.maxFiles + 1);
    const entries = parseCentralDirectory(await readAt(fh, r, end.cdOffset, end.cdSize, r.path), count, r.path, count < end.entries);
    const plan = entries.map((e) => ({ e, path: admit(e, guard, limits) })).sort((a, b) => a.e.localOffset - b.e.localOffset);
    let floor = 0;
    for (const { e, path } of plan) {
      // Entries sharing bytes are the "overlapping files" bomb (Fifield 2019); valid zips never overlap.
      if (e.localOffset < floor) throw unsafe(ARCHIVE_CODES.BOMB, e.name, 'entry overlaps the data of another entry (overlapping-file zip bomb)');
      const dataStart = e.localOffset + (await localHeaderLength(fh, r, e));
      floor = dataStart + e.compressedSize;
      if (floor > end.cdOffset) throw malformed(ARCHIVE_CODES.TRUNCATED, e.name, 'entry data runs into the central directory');
      if (path === null) continue;
      const stream = zipEntryStream(fh, r, dataStart, e);
      yield { path, size: e.size, stream };
      if (!stream.readableEnded) stream.resume();
      await finished(stream);
    }
  } finally {
    await fh.close();
  }
}

/** Every header rule, before any data is read: returns the normalised path, or null for a folder. */
function admit(e: CdEntry, guard: EntryGuard, limits: ArchiveLimits): string | null {
  const d = guard.admit({ name: e.name, kind: e.kind, size: e.size, typeName: e.typeName });
  if (d.kind === 'dir') {
    if (e.size !== 0) throw malformed(ARCHIVE_CODES.CORRUPT, e.name, 'folder entry with data');
    return null;
  }
  checkSupported(e);
  if (e.size > RATIO_FLOOR_BYTES && e.size / Math.max(1, e.compressedSize) > limits.maxRatio) {
    throw unsafe(
      ARCHIVE_CODES.BOMB,
      e.name,
      `declares ${e.size} bytes from ${e.compressedSize} compressed (ratio above ${limits.maxRatio}: a decompression bomb)`,
      { declared: e.size, compressed: e.compressedSize },
    );
  }
  return d.path;
}

async function localHeaderLength(fh: Parameters<typeof readAt>[0], r: Range, e: CdEntry): Promise<number> {
  const guess = Math.min(LOCAL_FIXED + e.nameBytes.length + 512, r.length - e.localOffset);
  if (guess < LOCAL_FIXED) throw malformed(ARCHIVE_CODES.TRUNCATED, e.name, 'local header runs past the end of the archive');
  let header = await readAt(fh, r, e.localOffset, guess, e.name);
  const { nameLen, extraLen } = localLengths(header, e);
  const need = LOCAL_FIXED + nameLen + extraLen;
  if (need > header.length) header = await readAt(fh, r, e.localOffset, need, e.name);
  checkLocalHeader(header.subarray(0, need), e);
  return need;
}
