import type { FileEntry, LoadedIndex } from './version-index.js';

/**
 * Skew protection: during and after a rollout, a reader's open page (or a request that lands on a
 * replica that already switched, or not yet) asks for content-hashed chunks of another version.
 * A URL the active version does not have is looked up, for non-HTML files only, in the version
 * pre-loaded for the next switch and in versions retired less than `graceMs` ago (newest first),
 * and served from there with that version's headers (X-Airlock-Version says which). Pages are
 * never served from another version: HTML always comes from the active one (and its 404).
 * Every non-HTML file is covered, not only names that look hashed: a build tool's naming scheme
 * is not ours to guess, and a file the active version still has is always the active one's.
 */
export interface SkewOptions {
  graceMs: number;
  max?: number;
  now?: () => number;
}

const HTML = /\.html?$/i;

export class SkewGuard {
  private retired: Array<{ idx: LoadedIndex; until: number }> = [];
  private next: LoadedIndex | null = null;
  private readonly now: () => number;

  constructor(private readonly o: SkewOptions) {
    this.now = o.now ?? Date.now;
  }

  /** The version pre-loaded for the coming switch (or null once it is active or dropped). */
  ahead(idx: LoadedIndex | null): void {
    this.next = idx;
  }

  /** `old` stopped being active in favour of `active`. */
  retire(old: LoadedIndex, active: LoadedIndex): void {
    if (this.o.graceMs <= 0) return;
    const now = this.now();
    this.retired = [
      { idx: old, until: now + this.o.graceMs },
      ...this.retired.filter((r) => r.until > now && r.idx.version !== old.version && r.idx.version !== active.version),
    ].slice(0, this.o.max ?? 4);
    if (this.next?.version === active.version) this.next = null;
    // Let the old index go once its grace is over, even if no request asks.
    setTimeout(() => this.expire(), this.o.graceMs + 1000).unref();
  }

  private expire(): void {
    const now = this.now();
    this.retired = this.retired.filter((r) => r.until > now);
  }

  /** Versions retired and still in their grace period (newest first). */
  versions(): string[] {
    const now = this.now();
    return this.retired.filter((r) => r.until > now).map((r) => r.idx.version);
  }

  /** A non-HTML file of the coming or a recently retired version, for a path the active one lacks. */
  find(path: string): { idx: LoadedIndex; file: FileEntry } | null {
    if (this.next === null && this.retired.length === 0) return null;
    const now = this.now();
    for (const idx of this.next ? [this.next] : []) {
      const hit = fileOf(idx, path);
      if (hit) return hit;
    }
    for (const r of this.retired) {
      if (r.until <= now) continue;
      const hit = fileOf(r.idx, path);
      if (hit) return hit;
    }
    return null;
  }
}

function fileOf(idx: LoadedIndex, path: string): { idx: LoadedIndex; file: FileEntry } | null {
  const route = idx.routes.get(path);
  if (route?.kind !== 'file' || HTML.test(route.file.path) || route.file.resolve !== null) return null;
  return { idx, file: route.file };
}
