import { StoreError } from '../errors.js';
import { versionDir } from '../store/paths.js';
import { loadIndex, type IndexLoadOptions } from './load.js';
import type { ServeMetrics } from './metrics.js';
import type { SkewGuard } from './skew.js';
import type { SiteInput } from './source.js';
import type { LoadedIndex } from './version-index.js';
import { ActiveWatcher } from './watcher.js';
import { FolderGuard } from './folder-guard.js';

export interface LeaseLike {
  update(label: string): Promise<void>;
  release(): Promise<void>;
}

export interface VersionsOptions {
  store?: string;
  site?: SiteInput;
  /** Serving a pinned version: activation is ignored (no watcher, no adopt). */
  pinned: boolean;
  loadOpts: IndexLoadOptions;
  lease: LeaseLike | null;
  skew: SkewGuard | null;
  metrics?: ServeMetrics;
  onVersion?: (idx: LoadedIndex) => void;
  pollMs?: number;
  /** The store's folder was swapped for another store (a library's site): what is served is no longer the folder's. */
  onReplaced?: () => void;
  /** Drop what the memory cache read from under this version folder. */
  forget?: (dir: string) => void;
  /** How often guard() looks at the served version's folders (ms); null: the caller calls it (a library, for sites in use). */
  guardMs?: number | null;
  log: (line: string) => void;
}

/**
 * The versions a server answers from: the current index (replaced whole, by one reference swap,
 * so a request is always answered from one version), one version pre-loaded ahead of a
 * coordinated switch, self-repair of a damaged cache, and the watch of the store's active pointer.
 * The listener (server.ts) only reads `current`.
 */
export class ServedVersions {
  current: LoadedIndex;
  /** Why the served version cannot be served any more (its files gone and its repair failed); null while it can. */
  broken: string | null = null;
  /** The store's active version this server refused to switch to (it serves the one before), and why. */
  refused: { version: string; why: string } | null = null;
  private repairing: Promise<void> | null = null;
  /** A version loaded ahead of its activation (one at most); taken by the switch to it. */
  private preloaded: LoadedIndex | null = null;
  /** The version switched away from by adopt(), until adopted(). */
  private adopting: string | null = null;
  private watcher: ActiveWatcher | null = null;
  private readonly folders: FolderGuard | null;

  constructor(
    private readonly o: VersionsOptions,
    first: LoadedIndex,
  ) {
    this.current = first;
    const store = o.store;
    this.folders =
      store && !o.site
        ? new FolderGuard({
            store,
            current: () => this.current,
            forget: (target) => o.forget?.(versionDir(store, target.version)),
            damaged: (target, why) => {
              this.broken = why;
              o.log(`airlock serve: ${target.version} cannot be served: ${why}`);
            },
            changed: () => this.repair(),
          })
        : null;
  }

  /**
   * Self-repair: reload the served version (its cache rebuilds what was removed) and swap it in,
   * unless a switch happened meanwhile. One at a time; damage seen during a repair waits for it.
   */
  repair(): Promise<void> {
    const o = this.o;
    this.repairing ??= (async () => {
      const target = this.current;
      try {
        const idx = await loadIndex(o.site ? { site: o.site } : { store: o.store!, label: target.version }, o.loadOpts);
        if (this.current === target) {
          this.current = idx;
          o.onVersion?.(idx);
          void target.preparing?.stop();
        } else void idx.preparing?.stop();
        o.log(`airlock serve: rebuilt damaged cache files of ${target.version}`);
        this.broken = null;
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        if (this.current === target) this.broken = why;
        o.log(`airlock serve: repairing ${target.version} failed: ${why}`);
      } finally {
        this.repairing = null;
      }
    })();
    return this.repairing;
  }

  /** Look at the served version's folders now (folder-guard.ts): every guardMs, when a file could not be read, and on SIGHUP. */
  guard(missing = false): Promise<void> {
    return this.folders?.look(missing) ?? Promise.resolve();
  }

  private swapIn(idx: LoadedIndex, previous: string): void {
    const old = this.current;
    this.current = idx; // the only mutation: one reference swap, after the index is complete
    this.broken = null;
    this.refused = null;
    this.o.skew?.retire(old, idx);
    this.o.metrics?.serving(idx.version);
    this.o.onVersion?.(idx);
    void old.preparing?.stop(); // its pages being built finish (and are kept); the rest is dropped
    this.o.log(`airlock serve: now serving ${idx.version} (was ${previous})`);
  }

  /** Follow the store's active pointer (unpinned store servers only); guard the served version's folders. */
  watch(): void {
    const o = this.o;
    if (o.guardMs !== null) this.folders?.start(o.guardMs ?? 250);
    if (!o.store || o.site || o.pinned) return;
    this.watcher = new ActiveWatcher({
      store: o.store,
      current: () => this.current.version,
      pollMs: o.pollMs,
      onReplaced: o.onReplaced,
      onError: (err) => o.log(`airlock serve: ${err instanceof Error ? err.message : String(err)}`),
      switchTo: async (next) => {
        if (this.adopting !== null && next === this.adopting) return; // the pointer not yet moved by the follower
        const previous = this.current.version;
        await o.lease?.update(next); // announce first: prune must not take the version while we load it
        try {
          const ready = this.preloaded?.version === next ? this.preloaded : null;
          if (ready) {
            this.preloaded = null;
            o.skew?.ahead(null);
          }
          const idx = ready ?? (await loadIndex({ store: o.store!, label: next }, o.loadOpts));
          this.swapIn(idx, previous);
        } catch (err) {
          await o.lease?.update(previous).catch(() => {});
          this.refused = { version: next, why: err instanceof Error ? err.message : String(err) };
          throw err;
        }
      },
    });
    this.watcher.start();
  }

  async recheck(): Promise<void> {
    await Promise.all([this.watcher?.refresh(), this.guard()]);
  }

  adopt(next: string): boolean {
    if (this.preloaded?.version !== next || !this.watcher) return false;
    const idx = this.preloaded;
    this.preloaded = null;
    this.o.skew?.ahead(null);
    this.adopting = this.current.version;
    void this.o.lease?.update(next).catch(() => {});
    this.swapIn(idx, this.adopting);
    return true;
  }

  adopted(): void {
    this.adopting = null;
  }

  async preload(next: string): Promise<void> {
    const o = this.o;
    if (!o.store || o.site) throw new StoreError('AIRLOCK_NO_SOURCE', 'preload needs a store');
    if (this.current.version === next || this.preloaded?.version === next) return;
    const idx = await loadIndex({ store: o.store, label: next }, o.loadOpts);
    const old = this.preloaded;
    this.preloaded = idx;
    o.skew?.ahead(idx);
    void old?.preparing?.stop();
  }

  /** A library's site no request reached lately: its pointer is no longer polled (the file system's reports still switch it). */
  idle(): void {
    this.watcher?.pause();
  }

  /** In use again: the pointer is looked at now (a switch it names is done when this resolves), then polled. */
  inUse(): Promise<void> {
    return this.watcher?.resume() ?? Promise.resolve();
  }

  stopWatching(): void {
    this.watcher?.stop();
    this.folders?.stop();
  }

  /** After the listener closed: the background page builds of the current and pre-loaded versions. */
  async stopPreparing(): Promise<void> {
    await this.current.preparing?.stop();
    await this.preloaded?.preparing?.stop();
  }
}
