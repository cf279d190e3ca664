import { createServer, type Server } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import { rm } from 'node:fs/promises';
import { makeTempFolder } from '../util/fsx.js';
import type { AddressInfo } from 'node:net';
import type { Hono } from 'hono';
import { getRequestListener } from '@hono/node-server';
import { StoreError } from '../errors.js';
import { buildApp, type AppEnv } from './app.js';
import { BodyCache } from './body-cache.js';
import { createHandler } from './handler.js';
import { accessLogger } from './access-log.js';
import { loadIndex, type CspSource, type IndexLoadOptions } from './load.js';
import type { HtmlTransformSpec } from './html-pages.js';
import { readActive, type SiteInput } from './source.js';
import { acquireLease } from '../store/leases.js';
import { ActiveWatcher } from './watcher.js';
import { SkewGuard } from './skew.js';
import type { ServeMetrics } from './metrics.js';
import { refuseConnect } from '../util/http-connect.js';
import { createTlsServer, type TlsFiles, type TlsPair } from './tls.js';
import type { LoadedIndex, TransformHtml } from './version-index.js';

export interface LeaseLike { update(label: string): Promise<void>; release(): Promise<void> }

export interface AirlockServerOptions {
  /** Store folder: serve its active version (or `version`, pinned). */
  store?: string;
  version?: string;
  /** Preview: a site folder and its file list, no store. */
  site?: SiteInput;
  cacheBytes?: number;
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
  /** Announce the served version so prune keeps it; default src/store acquireLease, false for none. */
  lease?: ((store: string, label: string) => Promise<LeaseLike>) | false;
  /** Also hand these requests to `app` (fail-fast answers for features that are off, relays). */
  appRoute?: (method: string, path: string) => boolean;
  log?: (line: string) => void;
  pollMs?: number;
  /** Skew protection (skew.ts): ms a previous version's non-HTML files keep answering after a switch (default 10 min; 0: off). */
  skewGraceMs?: number;
  /** The site's sub-path (base-path.ts parseBasePath: segments, or null for the root only); undefined: detected per version. */
  basePath?: string | null;
  /** Count requests and switches for `GET /_airlock/metrics` (src/serve/metrics.ts). */
  metrics?: ServeMetrics;
  /** Called with every version index swapped in (start, switch, repair): derived data such as local search. */
  onVersion?: (idx: LoadedIndex) => void;
  /** Called once when the server has closed. */
  onClose?: () => Promise<void>;
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

export const DEFAULT_CSP = "default-src 'self'; frame-ancestors 'self'";
const AIR_GAPPED = { deployment: 'air-gapped', features: { search: false, assistant: false, analytics: false, apiPlayground: false, staticExport: true, localSearch: false } };

export async function createAirlockServer(o: AirlockServerOptions): Promise<AirlockServer> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  // Private scratch folder (preview's HTML cache, unkeyed hooks, read-only stores): made on first
  // use, removed on close.
  let scratchDir: Promise<string> | null = null;
  const scratch = () => (scratchDir ??= makeTempFolder('airlock-serve-html-'));
  const html = o.htmlTransform ?? (o.transformHtml ? { run: o.transformHtml } : null);
  const smallMax = o.smallFileMax ?? 64 * 1024;
  const loadOpts: IndexLoadOptions = { csp: o.csp ?? DEFAULT_CSP, html, scratch, log, poolSize: o.transformPoolSize, statAbove: smallMax, basePath: o.basePath };
  if (!o.site && !o.store) throw new StoreError('AIRLOCK_NO_SOURCE', 'createAirlockServer needs a store or a site');
  let label = o.version ?? null;
  if (!o.site && label === null) {
    label = await readActive(o.store!);
    if (label === null) throw new StoreError('AIRLOCK_NO_ACTIVE', `store ${o.store} has no active version: import with --activate, or airlock activate V`, { subject: o.store });
  }
  const leaseFn = o.lease === undefined ? acquireLease : o.lease;
  const lease = o.store && !o.site && leaseFn ? await leaseFn(o.store, label!) : null;
  const dropScratch = async () => {
    if (scratchDir) await rm(await scratchDir, { recursive: true, force: true }).catch(() => {});
  };
  let current: LoadedIndex;
  try {
    // Held: missing pages are built on request only until the server listens, so the background
    // build does not take the cores from the start-up it would otherwise slow down (cold start).
    current = await loadIndex(o.site ? { site: o.site } : { store: o.store!, label: label! }, { ...loadOpts, held: true });
  } catch (err) {
    await lease?.release().catch(() => {});
    await dropScratch();
    throw err;
  }

  // Self-repair: reload the served version (its cache rebuilds what was removed) and swap it in,
  // unless a switch happened meanwhile. One at a time; damage seen during a repair waits for it.
  let repairing: Promise<void> | null = null;
  const repair = (): Promise<void> => {
    repairing ??= (async () => {
      const target = current;
      try {
        const idx = await loadIndex(o.site ? { site: o.site } : { store: o.store!, label: target.version }, loadOpts);
        if (current === target) {
          current = idx;
          o.onVersion?.(idx);
          void target.preparing?.stop();
        } else void idx.preparing?.stop();
        log(`airlock serve: rebuilt damaged cache files of ${target.version}`);
      } catch (err) {
        log(`airlock serve: repairing ${target.version} failed: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        repairing = null;
      }
    })();
    return repairing;
  };

  o.metrics?.serving(current.version);
  o.onVersion?.(current);
  const app = buildApp({ features: o.features ?? (() => AIR_GAPPED), extra: o.app, metrics: o.metrics });
  const skew = o.store && !o.site && o.version === undefined ? new SkewGuard({ graceMs: o.skewGraceMs ?? 600_000 }) : null;
  const bodyCache = new BodyCache(o.cacheBytes ?? 64 * 1024 * 1024);
  const handler = createHandler({
    current: () => current,
    send: { cache: bodyCache, smallMax, onError: (err, file) => log(`airlock serve: error reading ${file}: ${String(err)}`), onDamaged: () => void repair() },
    app: getRequestListener(app.fetch),
    appPrefixes: ['/_airlock/', ...(o.appPrefixes ?? [])],
    appRoute: o.appRoute ?? null,
    accessLog: o.accessLog ? accessLogger(o.accessLog) : null,
    metrics: o.metrics ?? null,
    skew,
  });
  const tls = o.tls ? createTlsServer(o.tls.pair, o.tls.files, handler, log) : null;
  const server = tls ? tls.server : createServer({ keepAliveTimeout: 5000 }, handler);
  if (!tls) refuseConnect(server as Server);
  o.metrics?.attach(server);

  // A version loaded ahead of its activation (one at most); taken by the switch to it.
  let preloaded: LoadedIndex | null = null;
  let adopting: string | null = null; // the version switched away from by adopt(), until adopted()
  const swapIn = (idx: LoadedIndex, previous: string) => {
    const old = current;
    current = idx; // the only mutation: one reference swap, after the index is complete
    skew?.retire(old, idx);
    o.metrics?.serving(idx.version);
    o.onVersion?.(idx);
    void old.preparing?.stop(); // its pages being built finish (and are kept); the rest is dropped
    log(`airlock serve: now serving ${idx.version} (was ${previous})`);
  };
  const watcher = o.store && !o.site && o.version === undefined
    ? new ActiveWatcher({
      store: o.store,
      current: () => current.version,
      pollMs: o.pollMs,
      onError: (err) => log(`airlock serve: ${err instanceof Error ? err.message : String(err)}`),
      switchTo: async (next) => {
        if (adopting !== null && next === adopting) return; // the pointer not yet moved by the follower
        const previous = current.version;
        await lease?.update(next); // announce first: prune must not take the version while we load it
        try {
          const ready = preloaded?.version === next ? preloaded : null;
          if (ready) {
            preloaded = null;
            skew?.ahead(null);
          }
          const idx = ready ?? await loadIndex({ store: o.store!, label: next }, loadOpts);
          swapIn(idx, previous);
        } catch (err) {
          await lease?.update(previous).catch(() => {});
          throw err;
        }
      },
    })
    : null;
  watcher?.start();

  return {
    server,
    current: () => current,
    cachedBytes: () => bodyCache.size,
    reloadTls: () => tls?.reload() ?? Promise.resolve(false),
    recheck: () => watcher?.check() ?? Promise.resolve(),
    adopt: (next) => {
      if (preloaded?.version !== next || !watcher) return false;
      const idx = preloaded;
      preloaded = null;
      skew?.ahead(null);
      adopting = current.version;
      void lease?.update(next).catch(() => {});
      swapIn(idx, adopting);
      return true;
    },
    adopted: () => {
      adopting = null;
    },
    preload: async (next) => {
      if (!o.store || o.site) throw new StoreError('AIRLOCK_NO_SOURCE', 'preload needs a store');
      if (current.version === next || preloaded?.version === next) return;
      const idx = await loadIndex({ store: o.store, label: next }, loadOpts);
      const old = preloaded;
      preloaded = idx;
      skew?.ahead(idx);
      void old?.preparing?.stop();
    },
    listen: (port = 0, host = '127.0.0.1') =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          current.preparing?.release();
          const a = server.address() as AddressInfo;
          resolve(`${tls ? 'https' : 'http'}://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/`);
        });
      }),
    close: async (graceMs = 10_000) => {
      watcher?.stop();
      // Stop accepting, let in-flight requests finish, drop idle keep-alive sockets at once.
      if (tls) await tls.close(graceMs);
      else {
        const h1 = server as Server;
        const closed = new Promise<void>((resolve) => h1.close(() => resolve()));
        h1.closeIdleConnections();
        const timer = setTimeout(() => h1.closeAllConnections(), graceMs);
        await closed;
        clearTimeout(timer);
      }
      await current.preparing?.stop();
      await preloaded?.preparing?.stop();
      await lease?.release().catch(() => {});
      await o.onClose?.().catch(() => {});
      await dropScratch();
    },
    prepared: async () => {
      current.preparing?.release();
      await current.preparing?.done;
    },
  };
}
