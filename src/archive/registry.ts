import { ARCHIVE_CODES, unsafe } from './errors.js';

/**
 * The key two names collide under on some file system: NFC (macOS HFS+/APFS normalise) and full
 * case folding (Windows, macOS default). toUpperCase().toLowerCase() folds "ß" and "SS" alike.
 */
export function collisionKey(path: string): string {
  return path.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}

/**
 * Every path seen so far, to refuse duplicates before anything is written: a second entry with
 * the same name (exactly, after NFC, or after case folding) would overwrite the first on some
 * file system, so the file served would differ from the file verified. A file that is also a
 * folder of another file ("a" and "a/b") is refused the same way.
 */
export class PathRegistry {
  private readonly files = new Map<string, string>();
  private readonly dirs = new Map<string, string>();

  addFile(path: string, segments: string[], raw: string): void {
    const key = collisionKey(path);
    const clash = this.files.get(key) ?? this.dirs.get(key);
    if (clash !== undefined) throw dup(raw, clash);
    this.files.set(key, raw);
    this.addParents(segments, raw);
  }

  addDir(segments: string[], raw: string): void {
    this.addParents(segments, raw);
    this.markDir(segments.join('/'), raw);
  }

  private addParents(segments: string[], raw: string): void {
    let prefix = '';
    for (let i = 0; i < segments.length - 1; i++) {
      prefix = prefix ? `${prefix}/${segments[i]}` : segments[i]!;
      this.markDir(prefix, raw);
    }
  }

  private markDir(path: string, raw: string): void {
    const key = collisionKey(path);
    const clash = this.files.get(key);
    if (clash !== undefined) throw dup(raw, clash);
    if (!this.dirs.has(key)) this.dirs.set(key, raw);
  }
}

function dup(raw: string, earlier: string) {
  return unsafe(ARCHIVE_CODES.DUPLICATE_PATH, raw, `duplicate path: collides with earlier entry ${JSON.stringify(earlier)} (exactly, after Unicode NFC normalisation, or after case folding)`, { earlier });
}
