/** src/archive — safe reading of export archives (tar, tar.gz/tgz, zip). See docs/design.md. */
export type { ArchiveFormat, ArchiveLimits, ByteSource, ArchiveEntry, FileRecord, ScanResult, ReadOptions, ScanOptions, EntryWatch } from './types.js';
export { DEFAULT_LIMITS, RATIO_FLOOR_BYTES } from './types.js';
export { ARCHIVE_CODES, type ArchiveCode } from './errors.js';
export { detectFormat, DETECT_BYTES } from './detect.js';
export { readArchive } from './read.js';
export { wrappingFolder } from './wrapping.js';
export { scanArchive, extractArchive } from './scan.js';
// For src/package: a manifest's paths and the package's own tar headers follow the same rules.
export { checkEntryPath } from './paths.js';
export { tarChecksumValid } from './detect.js';
export { archiveSizeBound, resolveLimits } from './types.js';
export { probeCaseFolding } from './case-probe.js';
export { hashByteSource } from './source.js';
export { SpanFile, spanStream, MAX_SPANS, type FileSpan } from './spans.js';
// A new small file, written and fsynced (O_EXCL, no symlink followed): the delta rebuild's writes too.
export { writeSmall } from './write-io.js';
