import type { UnsafeArchiveError } from '../errors.js';
import { ARCHIVE_CODES, unsafe } from './errors.js';

/** The key two names collide under on every file system we write to: macOS (HFS+/APFS) normalises to one form. */
export function nfcKey(path: string): string {
  return path.normalize('NFC');
}

/**
 * The key two names collide under on a case-folding file system (Windows, macOS default, ext4
 * casefold): full case folding after NFC. toUpperCase().toLowerCase() folds "ß" and "SS" alike.
 */
export function collisionKey(path: string): string {
  return path.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}

interface Seen {
  norm: string;
  raw: string;
}

/**
 * Names seen under one key function. A file clashes with any file or folder of the same key; a
 * folder clashes with a file of the same key, and with a folder of the same key spelt otherwise
 * (two folders that one file system merges into one and another keeps apart).
 */
class KeySpace {
  private readonly files = new Map<string, Seen>();
  private readonly dirs = new Map<string, Seen>();

  constructor(
    private readonly key: (path: string) => string,
    private readonly clash: (raw: string, earlier: string) => UnsafeArchiveError,
  ) {}

  file(path: string, raw: string): void {
    const k = this.key(path);
    const earlier = this.files.get(k) ?? this.dirs.get(k);
    if (earlier !== undefined) throw this.clash(raw, earlier.raw);
    this.files.set(k, { norm: nfcKey(path), raw });
  }

  dir(path: string, raw: string): void {
    const k = this.key(path);
    const file = this.files.get(k);
    if (file !== undefined) throw this.clash(raw, file.raw);
    const norm = nfcKey(path);
    const dir = this.dirs.get(k);
    if (dir === undefined) this.dirs.set(k, { norm, raw });
    else if (dir.norm !== norm) throw this.clash(raw, dir.raw);
  }
}

/**
 * Every path seen so far, to refuse duplicates before anything is written: a second entry with
 * the same name (exactly or after NFC) would overwrite the first on some file system, so the
 * file served would differ from the file verified; a file that is also a folder ("a" and "a/b")
 * is refused the same way. Names that differ only in letter case are distinct files on a
 * case-sensitive destination (real exports hold `rules/A001/` beside `rules/a001/`) and are
 * refused only when the destination folds case (`foldsCase`, see case-probe.ts).
 */
export class PathRegistry {
  private readonly spaces: KeySpace[];

  constructor(foldsCase = false) {
    this.spaces = [new KeySpace(nfcKey, dup)];
    if (foldsCase) this.spaces.push(new KeySpace(collisionKey, caseClash));
  }

  addFile(path: string, segments: string[], raw: string): void {
    for (const s of this.spaces) s.file(path, raw);
    this.addParents(segments, raw);
  }

  addDir(segments: string[], raw: string): void {
    this.addParents(segments, raw);
    const path = segments.join('/');
    for (const s of this.spaces) s.dir(path, raw);
  }

  private addParents(segments: string[], raw: string): void {
    let prefix = '';
    for (let i = 0; i < segments.length - 1; i++) {
      prefix = prefix ? `${prefix}/${segments[i]}` : segments[i]!;
      for (const s of this.spaces) s.dir(prefix, raw);
    }
  }
}

function dup(raw: string, earlier: string) {
  return unsafe(
    ARCHIVE_CODES.DUPLICATE_PATH,
    raw,
    `duplicate path: collides with earlier entry ${JSON.stringify(earlier)} (exactly, or after Unicode NFC normalisation)`,
    { earlier },
  );
}

function caseClash(raw: string, earlier: string) {
  return unsafe(
    ARCHIVE_CODES.CASE_COLLISION,
    raw,
    `differs from earlier entry ${JSON.stringify(earlier)} only in letter case, and the destination file system folds case (one would overwrite the other); ` +
      'use a case-sensitive file system (ext4, XFS, btrfs) for the store or preview folder',
    { earlier },
  );
}
