import { SearchPool } from './pool.js';
import { searchablePages, type BuildInput, type BuildReport } from './build.js';
import type { QueryOptions, SearchHit } from './engine.js';

/**
 * Local search for the served versions: a version's index is loaded from its cache file or built,
 * in the background, in a search worker (pool.ts), when the version is loaded (`use`) or first
 * asked (`query`). Pages are served meanwhile; a query answers `building` (the route says 503 +
 * Retry-After) until the index is there. When the served version changes, the previous version's
 * index is dropped. An index that fails (its worker died, a page set too large for the worker's
 * heap) answers `failed` and is tried again after `retryMs`. One store's server has a pool of its
 * own (one worker); a library's sites share one (`pool`).
 */
export type SearchAnswer =
  { status: 'ready'; hits: SearchHit[] } | { status: 'building'; retryAfterSec: number } | { status: 'failed'; error: string; retryAfterSec: number };

/** What the search needs of a served version (serve's SearchSource is one). */
export interface SearchSource {
  label: string;
  siteDir: string;
  files: ReadonlyArray<{ path: string; sha256: string }>;
  /** Folder of the version's index cache file, or null to keep it in memory only. */
  searchCacheDir: string | null;
}

export interface LocalSearchOptions {
  log: (line: string) => void;
  queryTimeoutMs?: number;
  retryMs?: number;
  /** Heap bound of the worker of a pool of its own, in MB. */
  maxHeapMb?: number;
  /** Shared by a library's sites; without it the search has a pool of one worker of its own. */
  pool?: SearchPool;
}

let searches = 0;

export class LocalSearch {
  /** Keys of this search's indexes in the pool are `<id>/<version>`: versions of different sites share names. */
  private readonly id = ++searches;
  private readonly pool: SearchPool;
  /** The versions whose index this search asked the pool for. */
  private readonly asked = new Set<string>();
  /** Versions waiting for their HTML before their index is loaded: `building` meanwhile. */
  private readonly deferred = new Set<string>();
  private latest: string | null = null;
  private closed = false;

  constructor(private readonly o: LocalSearchOptions) {
    this.pool = o.pool ?? new SearchPool({ workers: 1, budgetBytes: Number.POSITIVE_INFINITY, maxHeapMb: o.maxHeapMb });
  }

  /**
   * The server loaded this version (start, switch, repair): prepare its index once `after` (its
   * HTML, which readers wait for, takes the cores first), drop the others. `onDemand`: prepare it
   * at its first query instead (a library's many sites: a site nobody searches costs nothing).
   */
  use(src: SearchSource, after?: Promise<unknown>, onDemand = false): void {
    this.latest = src.label;
    for (const v of [...this.asked]) if (v !== src.label) this.forget(v);
    for (const v of [...this.deferred]) if (v !== src.label) this.deferred.delete(v);
    if (this.asked.has(src.label) || this.deferred.has(src.label) || onDemand) return;
    if (!after) return this.start(src);
    this.deferred.add(src.label);
    void after
      .catch(() => {})
      .then(() => {
        if (this.closed || !this.deferred.delete(src.label)) return; // dropped or closed meanwhile
        this.start(src);
      });
  }

  async query(src: SearchSource, query: string, options: QueryOptions): Promise<SearchAnswer> {
    if (this.closed || (this.latest !== null && this.latest !== src.label)) return { status: 'building', retryAfterSec: 1 };
    if (this.deferred.has(src.label)) return { status: 'building', retryAfterSec: 2 };
    const key = this.key(src.label);
    const retryMs = this.o.retryMs ?? 30_000;
    let s = this.pool.state(key);
    if (s.state === 'absent' || (s.state === 'failed' && Date.now() - s.failedAt >= retryMs)) {
      this.start(src);
      s = this.pool.state(key);
    }
    this.pool.touch(key);
    if (s.state === 'building' || s.state === 'absent') return { status: 'building', retryAfterSec: 2 };
    if (s.state === 'failed') return { status: 'failed', error: s.error, retryAfterSec: Math.ceil(retryMs / 1000) };
    const reply = await this.pool.query(key, query, options, this.o.queryTimeoutMs ?? 5000);
    if ('hits' in reply) return { status: 'ready', hits: reply.hits };
    return { status: 'failed', error: reply.error, retryAfterSec: 1 };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.deferred.clear();
    for (const v of [...this.asked]) this.forget(v);
    if (!this.o.pool) await this.pool.close();
  }

  private key(label: string): string {
    return `${this.id}/${label}`;
  }

  private forget(label: string): void {
    this.asked.delete(label);
    this.pool.drop(this.key(label));
  }

  private start(src: SearchSource): void {
    const input: BuildInput = {
      siteDir: src.siteDir,
      pages: searchablePages(src.files).map((f) => ({ path: f.path, sha256: f.sha256 })),
      cacheDir: src.searchCacheDir,
    };
    this.asked.add(src.label);
    this.pool.load(this.key(src.label), input, {
      ready: (r) => this.o.log(readyLine(src.label, r)),
      failed: (msg) => this.o.log(`airlock serve: local search index of ${src.label} failed: ${msg}`),
    });
  }
}

function readyLine(label: string, r: BuildReport): string {
  const what = r.from === 'cache' ? 'loaded from its cache file' : 'built';
  const notes = r.notes.length ? `; ${r.notes.slice(0, 3).join('; ')}${r.notes.length > 3 ? ` (+${r.notes.length - 3} more)` : ''}` : '';
  return `airlock serve: local search index of ${label} ${what} in ${(r.ms / 1000).toFixed(1)} s (${r.pages} pages)${notes}`;
}
