import type { Coding } from './encoding.js';
import { repHeaders, type FlatHeaders } from './headers.js';

/** What the representations of one file share: one object per file, referenced by its reps. */
export interface FileMeta {
  base: FlatHeaders;
  contentType: string;
  cacheControl: string;
  lastModified: string;
  vary: boolean;
  /** The served content's digest (the transformed page's, for transformed HTML): the ETag source. */
  sha256: string;
}

/** RFC 9110 strong ETag from the content digest, suffixed per coding so representations differ (§8.8.3). */
export function etagOf(sha256: string, coding: Coding): string {
  return `"${sha256.slice(0, 32)}${coding ? '-' + (coding === 'br' ? 'br' : 'gz') : ''}"`;
}

/**
 * One representation (identity, br or gzip) of a file. A `dynamic` one has no file of its own yet:
 * its bytes are compressed from the identity file on request (compress-now.ts), with the levels
 * of the variant that will replace it, hence the same ETag; its 200 headers carry no length. Its header lists are built on its first
 * request and kept: a version loads without building ~30,000 header arrays it may never send
 * (load time and memory of a big site), while a hot file still costs nothing per request.
 */
export class Rep {
  private h: { ok: FlatHeaders; notModified: FlatHeaders; ranged: FlatHeaders } | null = null;
  private tag: string | null = null;
  private k: string | null = null;

  constructor(
    /** Absolute path of the bytes on disk (the site file, a variant, or a cached transformed page). */
    readonly file: string,
    /** Digest to check when the bytes are read into memory: set for derived cache files only (the site's own files were checked at import). */
    readonly verify: string | null,
    readonly size: number,
    readonly coding: Coding,
    private readonly meta: FileMeta,
    /** Compressed on request from `file` (the identity bytes, `size` long) instead of read. */
    readonly dynamic = false,
  ) {}

  /** The digest its bytes must have when read into memory: a derived file's, or the package's for the site's own bytes (a store file changed or read through a swapped folder is refused). */
  get digest(): string | null {
    return this.verify ?? (this.coding === null && !this.dynamic ? this.meta.sha256 : null);
  }

  /** The digest of the bytes a dynamic representation is compressed from (its identity's). */
  get source(): string {
    return this.meta.sha256;
  }

  /** Body-cache key of a dynamic body: by digest, so versions sharing a file share it; never a path (no NUL in paths). */
  get key(): string {
    return (this.k ??= `\0${this.coding ?? ''}:${this.meta.sha256}`);
  }

  get etag(): string {
    return (this.tag ??= etagOf(this.meta.sha256, this.coding));
  }

  private built() {
    const m = this.meta;
    if (this.h !== null) return this.h;
    const h = repHeaders({
      base: m.base,
      contentType: m.contentType,
      cacheControl: m.cacheControl,
      lastModified: m.lastModified,
      etag: this.etag,
      size: this.size,
      coding: this.coding,
      vary: m.vary,
    });
    if (this.dynamic) h.ok = withoutLength(h.ok);
    return (this.h = h);
  }

  /** 200 headers. */
  get headers(): FlatHeaders {
    return this.h !== null ? this.h.ok : this.built().ok;
  }

  /** The validator subset a 304 carries (RFC 9110 §15.4.5). */
  get notModified(): FlatHeaders {
    return this.built().notModified;
  }

  /** 206 headers before Content-Range / Content-Length. */
  get ranged(): FlatHeaders {
    return this.built().ranged;
  }
}

function withoutLength(h: FlatHeaders): FlatHeaders {
  const out: FlatHeaders = [];
  for (let i = 0; i < h.length; i += 2) if (h[i] !== 'Content-Length') out.push(h[i]!, h[i + 1]!);
  return out;
}
