import type { ArchiveLimits } from './types.js';
import { ARCHIVE_CODES, unsafe } from './errors.js';
import { checkEntryPath } from './paths.js';
import { PathRegistry } from './registry.js';

export type EntryKind = 'file' | 'dir' | 'symlink' | 'hardlink' | 'device' | 'fifo' | 'other';

export interface RawHeader {
  /** The final name as the archive spells it (after pax / long-name records). */
  name: string;
  kind: EntryKind;
  /** Declared size in bytes (file entries). */
  size: number;
  /** A readable word for refusals of 'other' kinds ("SparseFile", "socket"). */
  typeName?: string;
}

/** What the reader should do with an entry that passed every rule. */
export type Decision = { kind: 'file'; path: string } | { kind: 'dir' };

/**
 * The archive safety rules that apply to an entry header, in one place for tar
 * and zip. Stateful (counts, names seen), no I/O. Every refusal names the entry as given.
 */
export class EntryGuard {
  private readonly registry: PathRegistry;
  private entries = 0;
  private bytes = 0;

  /** `foldsCase`: the destination file system folds letter case (names differing only in case collide). */
  constructor(
    private readonly limits: ArchiveLimits,
    foldsCase = false,
  ) {
    this.registry = new PathRegistry(foldsCase);
  }

  admit(h: RawHeader): Decision {
    if (h.kind === 'symlink' || h.kind === 'hardlink') {
      // A link lets a later entry (or the server) reach outside the site: "symlink then file through it".
      throw unsafe(ARCHIVE_CODES.LINK, h.name, `${h.kind === 'symlink' ? 'symbolic' : 'hard'} link entries are not allowed`, { kind: h.kind });
    }
    if (h.kind === 'device' || h.kind === 'fifo' || h.kind === 'other') {
      throw unsafe(ARCHIVE_CODES.SPECIAL_FILE, h.name, `${h.typeName ?? h.kind} entries are not allowed (only files and folders)`, {
        kind: h.typeName ?? h.kind,
      });
    }
    this.entries += 1;
    if (this.entries > this.limits.maxFiles) {
      throw unsafe(ARCHIVE_CODES.TOO_MANY_FILES, h.name, `more than ${this.limits.maxFiles} entries (limit maxFiles)`, { limit: this.limits.maxFiles });
    }
    const p = checkEntryPath(h.name);
    if (h.kind === 'dir') {
      this.registry.addDir(p.segments, h.name);
      return { kind: 'dir' };
    }
    if (p.segments.length === 0) throw unsafe(ARCHIVE_CODES.UNSAFE_PATH, h.name, 'a file entry without a file name');
    if (p.trailingSlash) throw unsafe(ARCHIVE_CODES.UNSAFE_PATH, h.name, 'a file entry whose name ends with "/"');
    this.bytes += h.size;
    if (this.bytes > this.limits.maxExpandedBytes) {
      throw unsafe(ARCHIVE_CODES.TOO_LARGE, h.name, `expanded size exceeds ${this.limits.maxExpandedBytes} bytes (limit maxExpandedBytes)`, {
        limit: this.limits.maxExpandedBytes,
      });
    }
    this.registry.addFile(p.path, p.segments, h.name);
    return { kind: 'file', path: p.path };
  }
}
