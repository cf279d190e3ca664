import { parse, parseIntFlag, checkVersionLabel } from './args.js';
import { log, out, type CliContext } from './context.js';
import type { Command } from './main.js';
import { resolveFeatures, formatMatrix } from '../features/index.js';
import { requireStore, resolveStore } from '../store/index.js';
import { featureOptions } from '../serve/features.js';
import { runServer } from '../serve/run.js';
import cluster from 'node:cluster';
import { resolve } from 'node:path';
import { extraRoutes, loadValues, mergeSettings, prepareStart } from '../values/index.js';
import { createRelay, relayConfig, DEFAULT_LIMITS } from '../relay/index.js';
import { probeListen } from '../util/listen.js';
import { trapFor } from './interrupt.js';
import { Progress } from './progress.js';
import { downloadReporter } from './reporters.js';
import { createMetrics } from '../serve/index.js';

const usage = `usage: airlock serve [--values FILE] [--store DIR] [--version V] [--deployment TYPE] [--enable F,...] [--disable F,...]
                     [--port N] [--host H] [--workers N] [--access-log FILE|-] [--cache-mb N] [--metrics] [--mirror --mirror-tokens FILE]
                     [--assistant-url URL] [--rate-limit-org-hour N] [--rate-limit-ip-day N]

Serve the store's active version (or --version V, pinned: activation is then ignored).
Unpinned servers switch to a newly activated version within 1 s (also on SIGHUP).
SIGTERM/SIGINT: stop accepting, finish in-flight requests, exit 0. Prints the URL on stdout.

  --values FILE        Helm-style values (staticExport.enabled|bundleUrl|version, deployment.type, features,
                       store, port, host, mirror.*): see docs/mirror.md; flags given here win over it.
                       At most 1 MiB, 64 levels deep, aliases expanding to at most 10,000 nodes.
  --mirror             also answer the service's static-export API for the store's versions (docs/mirror.md)
  --mirror-tokens F    file of allowed mirror admin tokens, one sha256:<hex> per line
  --store DIR          store folder (default $AIRLOCK_STORE, else ./airlock-store)
  --version V          serve version V, pinned (activation is then ignored)
  --deployment TYPE    cloud | client-hosted | air-gapped (default air-gapped)
  --enable F,...       turn on configurable features (search, assistant, analytics, api-playground, static-export)
  --disable F,...      turn off configurable features
  --port N             default 8080 (0: any free port)
  --host H             default 127.0.0.1 (0.0.0.0 to serve the network)
  --workers N          processes sharing the port (default 1)
  --access-log F       one JSON line per request to F ('-' = stderr); off by default
  --cache-mb N         memory budget for small files (default 64)
  --metrics            GET /_airlock/metrics in Prometheus text format (requests by method and status
                       class, latency, bytes, served version, switches, imports, mirror downloads)

Search and assistant, where on (cloud; client-hosted with --enable), are relayed on this origin
(POST /discovery/v2/assistant/DOMAIN/message, GET|POST /discovery/v2/search/DOMAIN): bodies are
checked against the service's schema, rate limits applied, then forwarded with the key from
AIRLOCK_ASSISTANT_KEY (an assistant key svc_dsc_...; missing or wrong: exit 5).
  --assistant-url URL       the service's base URL for the relay (default $AIRLOCK_API_URL)
  --rate-limit-org-hour N   relayed requests per hour for the whole site (default ${DEFAULT_LIMITS.orgPerHour})
  --rate-limit-ip-day N     relayed requests per client IP per day (default ${DEFAULT_LIMITS.ipPerDay})

Deployment matrix:
${formatMatrix()}

Exit codes: 0 stopped by a signal, 1 failure (e.g. the port is taken: nothing is left behind),
2 usage or a bad values file, 4 the values file's bundle failed verification, 5 a wrong or missing
assistant key.
`;

const command: Command = {
  summary: 'serve the active (or pinned) version of a store',
  usage,
  async run(argv: string[], ctx: CliContext) {
    const { values } = parse(argv, {
      store: { type: 'string' }, version: { type: 'string' }, deployment: { type: 'string' },
      enable: { type: 'string', multiple: true }, disable: { type: 'string', multiple: true },
      port: { type: 'string' }, host: { type: 'string' }, workers: { type: 'string' }, 'access-log': { type: 'string' }, 'cache-mb': { type: 'string' },
      'assistant-url': { type: 'string' }, 'rate-limit-org-hour': { type: 'string' }, 'rate-limit-ip-day': { type: 'string' },
      values: { type: 'string' }, mirror: { type: 'boolean' }, 'mirror-tokens': { type: 'string' }, metrics: { type: 'boolean' },
    }, false);
    const metrics = values.metrics ? createMetrics() : undefined;
    // Values file (issue 6): flags given on the command line win over it, key by key.
    const loaded = values.values === undefined ? null : await loadValues(resolve(ctx.cwd, values.values));
    for (const w of loaded?.warnings ?? []) log(ctx, `airlock serve: warning: ${w}`);
    const s = mergeSettings({ ...values, 'mirror-tokens': values['mirror-tokens'] && resolve(ctx.cwd, values['mirror-tokens']) }, loaded?.values);
    const resolved = resolveFeatures({ deployment: s.deployment, enable: s.enable, disable: s.disable });
    const version = s.version === undefined ? undefined : checkVersionLabel(s.version);
    const store = resolveStore(s.store, ctx.env, ctx.cwd);
    // Only a bundle to download may create the store; otherwise a missing one is a wrong --store (exit 2).
    if (!s.staticExport?.bundleUrl) await requireStore(store);
    const workers = parseIntFlag(values.workers, '--workers', 1, 64) ?? 1;
    const host = s.host ?? '127.0.0.1';
    const limits = {
      orgPerHour: parseIntFlag(values['rate-limit-org-hour'], '--rate-limit-org-hour', 1) ?? DEFAULT_LIMITS.orgPerHour,
      ipPerDay: parseIntFlag(values['rate-limit-ip-day'], '--rate-limit-ip-day', 1) ?? DEFAULT_LIMITS.ipPerDay,
    };
    const port = parseIntFlag(s.port, '--port', 0, 65535) ?? 8080;
    const cacheMb = parseIntFlag(values['cache-mb'], '--cache-mb', 1, 1 << 20) ?? 64;
    if (cluster.isPrimary) await probeListen(host, port); // before a download or a long load
    // From here no signal ends the process before the lease is released and the relay closed.
    // SIGHUP means "re-read the active version": ignored until there is a server to do it.
    const trap = trapFor(ctx);
    trap.onHangup(() => {});
    const relayCfg = relayConfig(resolved, values['assistant-url'], ctx.env);
    const relay = relayCfg && createRelay({ ...relayCfg, resolved, limits, log: (line) => log(ctx, line) });
    try {
      const features = featureOptions(resolved, relay, { log: (line) => log(ctx, line) });
      // Mirror tokens and secret are read before any download: a bad file fails fast (exit 2).
      let warning: string[] | null = null;
      const extras = await extraRoutes({ settings: s, store, warning: () => warning, workers, features, log: (line) => log(ctx, line), onMirrorDownload: metrics?.mirrorDownload });
      const progress = new Progress(ctx.stderr, { interactive: ctx.interactive });
      const prepared = await prepareStart({
        settings: { ...s, version }, store, port, host, worker: cluster.isWorker, log: (line) => progress.log(line), signal: trap.signal,
        onDownload: downloadReporter(progress, 'airlock serve: download'), onImport: metrics?.importDone,
      }).catch((err: unknown) => {
        if (trap.signal.aborted) return null; // stopped during the bundle download: the part is kept for the next start
        throw err;
      }).finally(() => progress.end());
      if (prepared === null) return 0;
      warning = prepared.warning;
      return await runServer({
        server: { store, version: prepared.version, cacheBytes: cacheMb * 1024 * 1024, ...features, ...extras, metrics },
        port: prepared.port,
        host,
        workers,
        accessLog: values['access-log'],
        trap,
        hangup: 'reload',
        onUrl: (url) => out(ctx, url),
        log: (line) => log(ctx, line),
      });
    } finally {
      await relay?.close();
    }
  },
};
export default command;
