import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
import { acquireLease } from '../store/index.js';
import { ActiveWatcher } from './watcher.js';
import type { ServeMetrics } from './metrics.js';
import { refuseConnect } from '../util/http-connect.js';
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
  /** Count requests and switches for `GET /_airlock/metrics` (src/serve/metrics.ts). */
  metrics?: ServeMetrics;
  /** Called with every version index swapped in (start, switch, repair): derived data such as local search. */
  onVersion?: (idx: LoadedIndex) => void;
  /** Called once when the server has closed. */
  onClose?: () => Promise<void>;
}

export interface AirlockServer {
  server: Server;
  listen(port?: number, host?: string): Promise<string>;
  close(graceMs?: number): Promise<void>;
  current(): LoadedIndex;
  /** Bytes held by the small-file body cache (bounded by `cacheBytes`). */
  cachedBytes(): number;
  /** Resolves when the served version's HTML is all transformed and cached (at once when it was already). */
  prepared(): Promise<void>;
  /** Re-read the store's active pointer now (SIGHUP); no-op when pinned or previewing. */
  recheck(): Promise<void>;
}

export const DEFAULT_CSP = "default-src 'self'; frame-ancestors 'self'";
const AIR_GAPPED = { deployment: 'air-gapped', features: { search: false, assistant: false, analytics: false, apiPlayground: false, staticExport: true, localSearch: false } };

export async function createAirlockServer(o: AirlockServerOptions): Promise<AirlockServer> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  // Private scratch folder (preview's HTML cache, unkeyed hooks, read-only stores): made on first
  // use, removed on close.
  let scratchDir: Promise<string> | null = null;
  const scratch = () => (scratchDir ??= mkdtemp(join(tmpdir(), 'airlock-serve-html-')));
  const html = o.htmlTransform ?? (o.transformHtml ? { run: o.transformHtml } : null);
  const smallMax = o.smallFileMax ?? 64 * 1024;
  const loadOpts: IndexLoadOptions = { csp: o.csp ?? DEFAULT_CSP, html, scratch, log, poolSize: o.transformPoolSize, statAbove: smallMax };
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
    current = await loadIndex(o.site ? { site: o.site } : { store: o.store!, label: label! }, loadOpts);
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
  const bodyCache = new BodyCache(o.cacheBytes ?? 64 * 1024 * 1024);
  const handler = createHandler({
    current: () => current,
    send: { cache: bodyCache, smallMax, onError: (err, file) => log(`airlock serve: error reading ${file}: ${String(err)}`), onDamaged: () => void repair() },
    app: getRequestListener(app.fetch),
    appPrefixes: ['/_airlock/', ...(o.appPrefixes ?? [])],
    appRoute: o.appRoute ?? null,
    accessLog: o.accessLog ? accessLogger(o.accessLog) : null,
    metrics: o.metrics ?? null,
  });
  const server = createServer({ keepAliveTimeout: 5000 }, handler);
  refuseConnect(server);

  const watcher = o.store && !o.site && o.version === undefined
    ? new ActiveWatcher({
      store: o.store,
      current: () => current.version,
      pollMs: o.pollMs,
      onError: (err) => log(`airlock serve: ${err instanceof Error ? err.message : String(err)}`),
      switchTo: async (next) => {
        const previous = current.version;
        await lease?.update(next); // announce first: prune must not take the version while we load it
        try {
          const idx = await loadIndex({ store: o.store!, label: next }, loadOpts);
          const old = current;
          current = idx; // the only mutation: one reference swap, after the index is complete
          o.metrics?.serving(next);
          o.onVersion?.(idx);
          void old.preparing?.stop(); // its pages being built finish (and are kept); the rest is dropped
          log(`airlock serve: now serving ${next} (was ${previous})`);
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
    recheck: () => watcher?.check() ?? Promise.resolve(),
    listen: (port = 0, host = '127.0.0.1') =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const a = server.address() as AddressInfo;
          resolve(`http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/`);
        });
      }),
    close: async (graceMs = 10_000) => {
      watcher?.stop();
      // Stop accepting, let in-flight requests finish, drop idle keep-alive sockets at once.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
      await current.preparing?.stop();
      await lease?.release().catch(() => {});
      await o.onClose?.().catch(() => {});
      await dropScratch();
    },
    prepared: async () => {
      await current.preparing?.done;
    },
  };
}
