import type { Readable } from 'node:stream';
import { z } from 'zod';

export type ArchiveFormat = 'tar.gz' | 'tar' | 'zip';

export interface ArchiveLimits {
  maxFiles: number;
  maxExpandedBytes: number;
  maxRatio: number;
}

/** Archive safety defaults: 200,000 files, 20 GiB expanded, ratio 200. */
export const DEFAULT_LIMITS: ArchiveLimits = Object.freeze({
  maxFiles: 200_000,
  maxExpandedBytes: 20 * 1024 ** 3,
  maxRatio: 200,
});

/**
 * Below this many inflated bytes a stream never counts as a bomb: a small file of spaces
 * legitimately compresses far better than 200:1, and the damage a bomb can do below 1 MiB is nil.
 */
export const RATIO_FLOOR_BYTES = 1024 * 1024;

import type { FileSpan } from './spans.js';

/** A byte range of a file: the whole file, or an archive member inside a .airlock package. */
export interface ByteSource {
  path: string;
  offset?: number;
  length?: number;
  /** The logical file is these pieces of other files, concatenated (a package read in place from
   *  its volumes); `path` then only names it in messages and offset/length address the whole. */
  spans?: readonly FileSpan[];
}

/** One file of the archive. `path` is validated and normalised ("./" and "//" removed), not yet stripped. */
export interface ArchiveEntry {
  path: string;
  size: number;
  stream: Readable;
}

export interface FileRecord {
  path: string;
  size: number;
  sha256: string;
}

export interface ScanResult {
  format: ArchiveFormat;
  archiveSha256: string;
  archiveSize: number;
  files: FileRecord[];
  strip: string;
}

export interface ReadOptions {
  limits?: Partial<ArchiveLimits>;
  format?: ArchiveFormat;
  /**
   * The destination file system folds letter case, so names that differ only in case collide
   * (AIRLOCK_CASE_COLLISION). Default false when nothing is written (scan, verify); extractArchive
   * probes its destination when this is not given (see case-probe.ts).
   */
  foldsCase?: boolean;
}

/**
 * What a caller that knows the expected content (a signed manifest) checks on each file as it
 * is read, so that a refusal comes at once instead of after every file was written.
 */
export interface EntryWatch {
  /** Before any byte of the entry is read or written; throw to refuse. `path` is not yet stripped. */
  entry(path: string, size: number): void;
  /** After the entry's last byte, with its sha256; throw to refuse. */
  done(path: string, size: number, sha256: string): void;
}

export interface ScanOptions extends ReadOptions {
  watch?: EntryWatch;
  /** Stop between entries and inside one; the walk rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * The sha256 of exactly these archive bytes, which the caller computed as it wrote them (the
   * store's copy of a package): reported as is, not read and hashed a second time. Every entry is
   * still hashed as it is extracted.
   */
  archiveSha256?: string;
}

const LimitsSchema = z.object({
  maxFiles: z.number().int().positive(),
  maxExpandedBytes: z.number().int().positive(),
  maxRatio: z.number().positive(),
});

/** Limits come from callers (flags, config): validate at the edge so a typo cannot disable a check. */
export function resolveLimits(partial: Partial<ArchiveLimits> | undefined): ArchiveLimits {
  const defined = Object.fromEntries(Object.entries(partial ?? {}).filter(([, v]) => v !== undefined));
  return LimitsSchema.parse({ ...DEFAULT_LIMITS, ...defined });
}

/**
 * The largest archive file that can still pass `limits`, for a download whose size nobody
 * announced: the expanded bytes, plus per file generous room for headers, long names and padding
 * (tar: 512-byte headers and blocks; zip: local and central entries), plus 1% for a compression
 * that did not compress. An endless body is cut here instead of filling the disk.
 */
export function archiveSizeBound(limits: Partial<ArchiveLimits> | undefined): number {
  const l = resolveLimits(limits);
  return l.maxExpandedBytes + Math.ceil(l.maxExpandedBytes / 100) + l.maxFiles * 8192 + (1 << 20);
}
