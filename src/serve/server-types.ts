import type { Server } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import type { Hono } from 'hono';
import type { AppEnv } from './app.js';
import type { CspSource } from './load.js';
import type { BodyCache } from './body-cache.js';
import type { HtmlTransformSpec } from './html-pages.js';
import type { SiteInput } from './source.js';
import type { PageWorkers } from './html-cache/pool.js';
import type { InTurn } from './variants-later.js';
import type { LeaseLike } from './versions.js';
import type { ServeMetrics } from './metrics.js';
import type { TlsFiles, TlsPair } from './tls.js';
import type { LoadedIndex, TransformHtml } from './version-index.js';
import type { LocalSearch } from '../search/service.js';

/** What `createAirlockServer` (server.ts) takes and gives: its options and the running server. */

export interface AirlockServerOptions {
  /** Store folder: serve its active version (or `version`, pinned). */
  store?: string;
  version?: string;
  /** Preview: a site folder and its file list, no store. */
  site?: SiteInput;
  cacheBytes?: number;
  /** A small-file cache shared with other sites (a library's): keyed by absolute path and digest, so sites never share an entry they should not. */
  bodyCache?: BodyCache;
  smallFileMax?: number;
  accessLog?: NodeJS.WritableStream | null;
  /** More routes (relays, mirror), reached for paths under `appPrefixes` (and `/_airlock/`). */
  app?: Hono<AppEnv>;
  appPrefixes?: string[];
  /** Content-Security-Policy for every response, or a function of the inline hashes the HTML transform kept. */
  csp?: CspSource;
  features?: () => unknown;
  /** Transform served HTML once per version (src/features), cached on disk: see html-pages.ts. */
  htmlTransform?: HtmlTransformSpec;
  /** Shorthand for `htmlTransform: { run: transformHtml }` (in-process, private cache). */
  transformHtml?: TransformHtml;
  /** Worker threads for building a version's HTML cache (default: available cores). */
  transformPoolSize?: number;
  /** The pool every version this server prepares builds its HTML on (default: its own, of transformPoolSize); a library shares one. */
  pageWorkers?: PageWorkers;
  /** Runs each version's background precompression (default: at once); a library runs one site's at a time. */
  inTurn?: InTurn;
  /** Announce the served version so prune keeps it; default src/store acquireLease, false for none. */
  lease?: ((store: string, label: string) => Promise<LeaseLike>) | false;
  /** Also hand these requests to `app` (fail-fast answers for features that are off, relays). */
  appRoute?: (method: string, path: string) => boolean;
  log?: (line: string) => void;
  pollMs?: number;
  /** How often the served version's folders are looked at (ms; default 250); null: by the caller (a library, for the sites in use). */
  guardMs?: number | null;
  /** The store's folder was swapped for another store while served (seen when its state.json changes); a library closes the site. */
  onReplaced?: () => void;
  /** Skew protection (skew.ts): ms a previous version's non-HTML files keep answering after a switch (default 10 min; 0: off). */
  skewGraceMs?: number;
  /** Milliseconds since the epoch (default Date.now): the skew grace period's clock; tests move it. */
  clock?: () => number;
  /** The site's sub-path (base-path.ts parseBasePath: segments, or null for the root only); undefined: detected per version. */
  basePath?: string | null;
  /** Count requests and switches for `GET /_airlock/metrics` (src/serve/metrics.ts). */
  metrics?: ServeMetrics;
  /** Called with every version index swapped in (start, switch, repair): derived data such as local search. */
  onVersion?: (idx: LoadedIndex) => void;
  /** Called when the server begins to close, before in-flight requests are waited for (streams that would not end by themselves end). */
  onClosing?: () => void;
  /** Called once when the server has closed. */
  onClose?: () => Promise<void>;
  /** Local search of the served version (featureOptions, when local-search is on): a library searches its sites with it. */
  localSearch?: LocalSearch;
  /** HTTPS: HTTP/2 with HTTP/1.1 fallback by ALPN (tls.ts); with `files`, reloadable (SIGHUP, file changes). */
  tls?: { pair: TlsPair; files: TlsFiles | null };
}

export interface AirlockServer {
  server: Server | Http2SecureServer;
  /** Re-read the TLS certificate files (SIGHUP); false when not serving TLS or the new pair was refused. */
  reloadTls(): Promise<boolean>;
  listen(port?: number, host?: string): Promise<string>;
  close(graceMs?: number): Promise<void>;
  current(): LoadedIndex;
  /** Bytes held by the small-file body cache (bounded by `cacheBytes`). */
  cachedBytes(): number;
  /** Resolves when the served version's HTML is all transformed and cached (at once when it was already). */
  prepared(): Promise<void>;
  /** Re-read the store's active pointer now (SIGHUP); no-op when pinned or previewing. */
  recheck(): Promise<void>;
  /**
   * Load version `label` of the store now, so that a later switch to it (activation, then
   * `recheck`) is one reference swap: a follower pre-loads before a coordinated switch instant.
   */
  preload(label: string): Promise<void>;
  /**
   * Swap the pre-loaded `label` in now (false if it is not the pre-loaded one), before the store's
   * pointer says so: a coordinated switch must not wait for the activation's fsyncs. Until
   * `adopted()` the watcher ignores the old pointer; then the store must name `label` (activate
   * it first) or the watcher switches back to what the store says.
   */
  adopt(label: string): boolean;
  adopted(): void;
}
