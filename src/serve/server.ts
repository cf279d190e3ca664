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
import { ServedVersions, type LeaseLike } from './versions.js';
import { SkewGuard } from './skew.js';
import type { ServeMetrics } from './metrics.js';
import { refuseConnect } from '../util/http-connect.js';
import { createTlsServer, type TlsFiles, type TlsPair } from './tls.js';
import type { LoadedIndex, TransformHtml } from './version-index.js';

export type { LeaseLike } from './versions.js';

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

  o.metrics?.serving(current.version);
  o.onVersion?.(current);
  const app = buildApp({ features: o.features ?? (() => AIR_GAPPED), extra: o.app, metrics: o.metrics });
  const skew = o.store && !o.site && o.version === undefined ? new SkewGuard({ graceMs: o.skewGraceMs ?? 600_000 }) : null;
  const bodyCache = new BodyCache(o.cacheBytes ?? 64 * 1024 * 1024);
  const versions = new ServedVersions({
    store: o.store, site: o.site, pinned: o.version !== undefined, loadOpts, lease, skew, metrics: o.metrics, onVersion: o.onVersion, pollMs: o.pollMs, log,
  }, current);
  const handler = createHandler({
    current: () => versions.current,
    send: { cache: bodyCache, smallMax, onError: (err, file) => log(`airlock serve: error reading ${file}: ${String(err)}`), onDamaged: () => void versions.repair() },
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

  versions.watch();

  return {
    server,
    current: () => versions.current,
    cachedBytes: () => bodyCache.size,
    reloadTls: () => tls?.reload() ?? Promise.resolve(false),
    recheck: () => versions.recheck(),
    adopt: (next) => versions.adopt(next),
    adopted: () => versions.adopted(),
    preload: (next) => versions.preload(next),
    listen: (port = 0, host = '127.0.0.1') =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          versions.current.preparing?.release();
          const a = server.address() as AddressInfo;
          resolve(`${tls ? 'https' : 'http'}://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/`);
        });
      }),
    close: async (graceMs = 10_000) => {
      versions.stopWatching();
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
      await versions.stopPreparing();
      await lease?.release().catch(() => {});
      await o.onClose?.().catch(() => {});
      await dropScratch();
    },
    prepared: async () => {
      versions.current.preparing?.release();
      await versions.current.preparing?.done;
    },
  };
}
