import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { rm } from 'node:fs/promises';
import { makeTempFolder } from '../util/fsx.js';
import { errnoInWords } from '../util/fs-words.js';
import { getRequestListener } from '@hono/node-server';
import { StoreError } from '../errors.js';
import { buildApp } from './app.js';
import { BodyCache } from './body-cache.js';
import { createHandler } from './handler.js';
import { forReaders } from './respond.js';
import { accessLogger } from './access-log.js';
import { loadIndex, type IndexLoadOptions } from './load.js';
import { readActive } from './source.js';
import { acquireLease } from '../store/leases.js';
import { ServedVersions } from './versions.js';
import { SkewGuard } from './skew.js';
import { refuseConnect } from '../util/http-connect.js';
import { gracefulClose, listenOn } from '../util/http-listen.js';
import { createTlsServer } from './tls.js';
import type { LoadedIndex } from './version-index.js';
import { defaultPoolSize, PageWorkers } from './html-cache/pool.js';
import { workerSlot } from './html-cache/worker-slot.js';

import type { AirlockServer, AirlockServerOptions } from './server-types.js';
import type { SearchAnswer } from '../search/service.js';
import type { QueryOptions } from '../search/engine.js';

export type { LeaseLike } from './versions.js';
export type { AirlockServer, AirlockServerOptions } from './server-types.js';

export const DEFAULT_CSP = "default-src 'self'; frame-ancestors 'self'";
const AIR_GAPPED = {
  deployment: 'air-gapped',
  features: { search: false, assistant: false, analytics: false, apiPlayground: false, staticExport: true, localSearch: false },
};

/**
 * One site being served: its versions (the active one loaded, the pointer watched), its lease and
 * its request handler, without a listener. A server listens for one (createAirlockServer); a
 * library's server for many (library.ts), each opened on its own.
 */
export interface OpenSite {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  versions: ServedVersions;
  bodyCache: BodyCache;
  /** A query of the served version's local search index; null when local search is off. */
  search: ((query: string, options: QueryOptions) => Promise<SearchAnswer>) | null;
  /** Once no request reaches it any more: stop watching and preparing, release the lease, drop the scratch folder. */
  close(): Promise<void>;
}

export async function openSite(o: AirlockServerOptions): Promise<OpenSite> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  // Private scratch folder (preview's HTML cache, unkeyed hooks, read-only stores): made on first
  // use, removed on close.
  let scratchDir: Promise<string> | null = null;
  const scratch = () => (scratchDir ??= makeTempFolder('airlock-serve-html-'));
  const html = o.htmlTransform ?? (o.transformHtml ? { run: o.transformHtml } : null);
  const smallMax = o.smallFileMax ?? 64 * 1024;
  const loadOpts: IndexLoadOptions = {
    csp: o.csp ?? DEFAULT_CSP,
    html,
    scratch,
    log,
    poolSize: o.transformPoolSize,
    workers: o.pageWorkers ?? new PageWorkers(o.transformPoolSize ?? defaultPoolSize(), workerSlot),
    inTurn: o.inTurn,
    statAbove: smallMax,
    basePath: o.basePath,
  };
  if (!o.site && !o.store) throw new StoreError('AIRLOCK_NO_SOURCE', 'createAirlockServer needs a store or a site');
  let label = o.version ?? null;
  if (!o.site && label === null) {
    label = await readActive(o.store!);
    if (label === null)
      throw new StoreError('AIRLOCK_NO_ACTIVE', `store ${o.store} has no active version: import with --activate, or airlock activate V`, { subject: o.store });
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
  const skew = o.store && !o.site && o.version === undefined ? new SkewGuard({ graceMs: o.skewGraceMs ?? 600_000, now: o.clock }) : null;
  const bodyCache = o.bodyCache ?? new BodyCache(o.cacheBytes ?? 64 * 1024 * 1024);
  const versions = new ServedVersions(
    {
      store: o.store,
      site: o.site,
      pinned: o.version !== undefined,
      loadOpts,
      lease,
      skew,
      metrics: o.metrics,
      onVersion: o.onVersion,
      pollMs: o.pollMs,
      onReplaced: o.onReplaced,
      forget: (dir) => bodyCache.forget(dir),
      guardMs: o.guardMs,
      log,
    },
    current,
  );
  const handler = createHandler({
    current: () => versions.current,
    send: {
      cache: bodyCache,
      smallMax,
      onError: (err, file) => log(`airlock serve: error reading ${file}: ${errnoInWords(err instanceof Error ? err.message : String(err))}`),
      onDamaged: () => void versions.repair(),
      onMissing: () => void versions.guard(true),
    },
    app: getRequestListener(app.fetch),
    appPrefixes: ['/_airlock/', ...(o.appPrefixes ?? [])],
    appRoute: o.appRoute ?? null,
    accessLog: o.accessLog ? accessLogger(o.accessLog) : null,
    metrics: o.metrics ?? null,
    skew,
    broken: () => (versions.broken === null || o.store === undefined ? versions.broken : forReaders(o.store, versions.broken)),
  });
  versions.watch();
  const local = o.localSearch;
  return {
    handler,
    versions,
    bodyCache,
    search: local ? (query, options) => local.query(versions.current.source, query, options) : null,
    close: async () => {
      versions.stopWatching();
      await versions.stopPreparing();
      await lease?.release().catch(() => {});
      await o.onClose?.().catch(() => {});
      await dropScratch();
    },
  };
}

export async function createAirlockServer(o: AirlockServerOptions): Promise<AirlockServer> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const { handler, versions, bodyCache, close: closeSite } = await openSite(o);
  const tls = o.tls ? createTlsServer(o.tls.pair, o.tls.files, handler, log) : null;
  const server = tls ? tls.server : createServer({ keepAliveTimeout: 5000 }, handler);
  if (!tls) refuseConnect(server as Server);
  const stop = tls ? null : gracefulClose(server as Server);
  o.metrics?.attach(server);

  return {
    server,
    current: () => versions.current,
    cachedBytes: () => bodyCache.size,
    reloadTls: () => tls?.reload() ?? Promise.resolve(false),
    recheck: () => versions.recheck(),
    adopt: (next) => versions.adopt(next),
    adopted: () => versions.adopted(),
    preload: (next) => versions.preload(next),
    listen: async (port = 0, host = '127.0.0.1') => {
      const url = await listenOn(server, port, host, tls ? 'https' : 'http');
      versions.current.preparing?.release();
      return url;
    },
    close: async (graceMs = 10_000) => {
      // Stop accepting, let in-flight requests finish, end connections with none at once.
      o.onClosing?.();
      await (tls ? tls.close(graceMs) : stop!(graceMs));
      await closeSite();
    },
    prepared: async () => {
      versions.current.preparing?.release();
      await versions.current.preparing?.done;
    },
  };
}
