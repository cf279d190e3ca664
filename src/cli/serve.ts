import { numeric, parse, checkVersionLabel } from './args.js';
import { numberOption, type NumberRange } from '../util/number-option.js';
import { log, out, type CliContext, type Command } from './context.js';
import { DEFAULT_DEPLOYMENT, DEPLOYMENTS, FEATURES, formatMatrix } from '../features/matrix.js';
import { resolveFeatures } from '../features/resolve.js';
import { requireStore } from '../store/location.js';
import { resolveStore } from '../store/paths.js';
import cluster from 'node:cluster';
import { resolve } from 'node:path';
import { FLAG_RANGES, mergeSettings } from '../values/settings.js';
import { relayConfig } from '../relay/config.js';
import { DEFAULT_LIMITS } from '../relay/limits.js';
import { listenError, probeListen } from '../util/listen.js';
import { trapFor } from './interrupt.js';
import { UsageError } from '../errors.js';

// Start-up: `serve --help` and a plain `serve` load only what they use. The server, the values
// file reader (yaml), the relays (undici), the metrics (prom-client), TLS and the follower are
// imported where the options ask for them.

const usage = `usage: airlock serve [--values FILE] [--store DIR] [--version V] [--deployment TYPE] [--enable F,...] [--disable F,...]
                     [--port N] [--host H] [--workers N] [--access-log FILE|-] [--cache-mb N] [--metrics] [--mirror --mirror-tokens FILE]
                     [--assistant-url URL] [--rate-limit-org-hour N] [--rate-limit-ip-day N]
                     [--follow MIRROR_URL [--trust KEY.pub ...] [--allow-unsigned] [--follow-poll-ms N]]
                     [--fleet-lead-ms N] [--skew-grace SECONDS] [--base-path P] [--tls-cert FILE --tls-key FILE]

Serve the store's active version (or --version V, pinned: activation is then ignored).
Unpinned servers switch to a newly activated version within 1 s (also on SIGHUP).
SIGTERM/SIGINT: stop accepting, finish in-flight requests, exit 0. Prints the URL on stdout.

  --values FILE        Helm-style values (staticExport.enabled|bundleUrl|version, deployment.type, features,
                       store, port, host, mirror.*): see docs/mirror.md; flags given here win over it.
                       At most 1 MiB, 64 levels deep, aliases expanding to at most 10,000 nodes.
                       With a version already active (nothing pinned), it is served while the bundle at
                       staticExport.bundleUrl downloads (ready 200); the server switches once it is imported.
                       The download is bounded (staticExport.download.*): headersTimeoutSeconds (default 30)
                       per request, minBytesPerSecond (default 1024) over every rateWindowSeconds (default 30),
                       timeoutSeconds (default 3600) for the whole download; past a bound the part is kept
                       for the next start and the active version stays served.
  --mirror             also answer the service's static-export API for the store's versions (docs/mirror.md)
  --mirror-tokens F    file of allowed mirror admin tokens, one sha256:<hex> per line
  --store DIR          store folder (default $AIRLOCK_STORE, else ./airlock-store)
  --version V          serve version V, pinned (activation is then ignored)
  --enable F,...       turn on configurable features (${FEATURES.join(', ')})
  --disable F,...      turn off features (static-export, the site itself, stays on)
  --deployment TYPE    ${DEPLOYMENTS.join(' | ')} (default ${DEFAULT_DEPLOYMENT})
  --port N             default 8080 (0: any free port)
  --host H             default 127.0.0.1 (0.0.0.0 to serve the network)
  --workers N          processes sharing the port (default 1)
  --access-log F       one JSON line per request to F ('-' = stderr); off by default
  --cache-mb N         memory budget for small files (default 64)
  --metrics            GET /_airlock/metrics in Prometheus text format (requests by method and status
                       class, latency, bytes, served version, switches, imports, mirror downloads)
  --base-path P        the sub-path the site was built for (/project/): served there and at /.
                       Default: detected per version from the site's own links, canonical URL and
                       sitemap; / turns detection off. Links to the site's published address
                       (its domain, canonical URL) are always made same-origin.

Fleets (docs/fleet.md):
  --follow URL         follow an airlock mirror (serve --mirror at URL): when its active version
                       changes, download the signed package, verify it (as airlock import does),
                       import and pre-load it, and switch at the instant the mirror announces, with
                       every other replica. The token comes from AIRLOCK_MIRROR_TOKEN or
                       AIRLOCK_MIRROR_TOKEN_FILE. An empty store gets the mirror's version first.
  --trust KEY.pub      public key that may sign followed packages (repeatable; plus S/trusted-keys)
  --allow-unsigned     accept unsigned packages from the mirror
  --follow-poll-ms N   poll interval (default 2000, ±20 % jitter, backing off to 30 s when unreachable)
  --fleet-lead-ms N    (a mirror) time from "every replica prepared" to the switch (default 5000)
  --skew-grace S       after a switch, the previous version's non-HTML files (content-hashed chunks)
                       keep answering for S seconds where the active version lacks them (default 600;
                       0: off). Pages always come from the active version.

TLS:
  --tls-cert F --tls-key F   serve HTTPS: HTTP/2, with HTTP/1.1 for clients that do not offer h2 (ALPN).
                       The pair is reloaded on SIGHUP and when the files change (a Kubernetes Secret
                       volume's swap included), without dropping connections; a pair that does not
                       load is refused, the previous one kept, and the error logged.

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

/** serve's numeric flags and their ranges: every one is checked before anything is read or started. */
const NUMBERS = {
  ...FLAG_RANGES,
  workers: { min: 1, max: 64 },
  'cache-mb': { min: 1, max: 1 << 20 },
  'rate-limit-org-hour': { min: 1, max: 1_000_000_000 },
  'rate-limit-ip-day': { min: 1, max: 1_000_000_000 },
} as const satisfies Record<string, NumberRange>;

const command: Command = {
  summary: 'serve the active (or pinned) version of a store',
  usage,
  async run(argv: string[], ctx: CliContext) {
    const { values, numbers: n } = parse(argv, {
      store: { type: 'string' }, version: { type: 'string' }, deployment: { type: 'string' },
      enable: { type: 'string', multiple: true }, disable: { type: 'string', multiple: true },
      port: numeric(NUMBERS.port), host: { type: 'string' }, workers: numeric(NUMBERS.workers), 'access-log': { type: 'string' }, 'cache-mb': numeric(NUMBERS['cache-mb']),
      'assistant-url': { type: 'string' }, 'rate-limit-org-hour': numeric(NUMBERS['rate-limit-org-hour']), 'rate-limit-ip-day': numeric(NUMBERS['rate-limit-ip-day']),
      values: { type: 'string' }, mirror: { type: 'boolean' }, 'mirror-tokens': { type: 'string' }, metrics: { type: 'boolean' },
      follow: { type: 'string' }, trust: { type: 'string', multiple: true }, 'allow-unsigned': { type: 'boolean' }, 'follow-poll-ms': numeric(NUMBERS['follow-poll-ms']),
      'fleet-lead-ms': numeric(NUMBERS['fleet-lead-ms']), 'skew-grace': numeric(NUMBERS['skew-grace']), 'base-path': { type: 'string' }, 'tls-cert': { type: 'string' }, 'tls-key': { type: 'string' },
    }, false);
    if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) throw new UsageError('--tls-cert and --tls-key go together', { subject: values['tls-cert'] === undefined ? '--tls-cert' : '--tls-key' });
    const tlsFiles = values['tls-cert'] === undefined ? null : { cert: resolve(ctx.cwd, values['tls-cert']), key: resolve(ctx.cwd, values['tls-key']!) };
    const tls = tlsFiles && { pair: await (await import('../serve/tls.js')).loadTlsPair(tlsFiles), files: tlsFiles };
    const metrics = values.metrics ? (await import('../serve/metrics.js')).createMetrics() : undefined;
    // Values file: flags given on the command line win over it, key by key.
    const loaded = values.values === undefined ? null : await (await import('../values/load.js')).loadValues(resolve(ctx.cwd, values.values));
    for (const w of loaded?.warnings ?? []) log(ctx, `airlock serve: warning: ${w}`);
    const s = mergeSettings({
      ...values, 'mirror-tokens': values['mirror-tokens'] && resolve(ctx.cwd, values['mirror-tokens']), trust: values.trust?.map((t) => resolve(ctx.cwd, t)),
    }, loaded?.values);
    const resolved = resolveFeatures({ deployment: s.deployment, enable: s.enable, disable: s.disable });
    const version = s.version === undefined ? undefined : checkVersionLabel(s.version);
    const store = resolveStore(s.store, ctx.env, ctx.cwd);
    // Only a bundle to download may create the store; otherwise a missing one is a wrong --store (exit 2).
    const workers = n.workers ?? 1;
    const grace = numberOption(s.skewGrace, '--skew-grace', NUMBERS['skew-grace']) ?? 600;
    const basePath = s.basePath === undefined ? undefined : (await import('../serve/base-path.js')).parseBasePath(s.basePath, values['base-path'] !== undefined ? '--base-path' : 'basePath');
    if (s.follow && workers > 1) throw new UsageError('--follow runs one process per replica (--workers 1): each worker would import on its own', { subject: '--follow' });
    if (s.follow && version !== undefined) throw new UsageError('--follow and a pinned --version exclude each other: a follower serves what the mirror activates', { subject: '--follow' });
    if (s.follow && s.staticExport?.bundleUrl) throw new UsageError('--follow and staticExport.bundleUrl exclude each other: a follower gets its versions from the mirror', { subject: '--follow' });
    if (!s.staticExport?.bundleUrl && !s.follow) await requireStore(store);
    const fleet = s.follow ? await import('../fleet/index.js') : null;
    const follower = s.follow && fleet
      ? new fleet.Follower({
        mirror: s.follow.url, token: await fleet.followToken(s.follow.tokenFile, ctx.env), store, trust: s.follow.trust, allowUnsigned: s.follow.allowUnsigned,
        pollMs: s.follow.pollMs, log: (line) => log(ctx, line), onImport: metrics?.importDone, onRefused: metrics?.refused,
      })
      : null;
    const host = s.host ?? '127.0.0.1';
    const limits = {
      orgPerHour: n['rate-limit-org-hour'] ?? DEFAULT_LIMITS.orgPerHour,
      ipPerDay: n['rate-limit-ip-day'] ?? DEFAULT_LIMITS.ipPerDay,
    };
    const port = numberOption(s.port, '--port', NUMBERS.port) ?? 8080;
    const cacheMb = n['cache-mb'] ?? 64;
    if (cluster.isPrimary) await probeListen(host, port); // before a download or a long load
    const [{ featureOptions }, { runServer }, { extraRoutes }, { prepareStart }, { startBootstrap }, { Progress }, { downloadReporter }] = await Promise.all([
      import('../serve/features.js'), import('../serve/run.js'), import('../values/wire.js'), import('../values/start.js'), import('../values/bootstrap.js'),
      import('./progress.js'), import('./reporters.js'),
    ]);
    // From here no signal ends the process before the lease is released and the relay closed.
    // SIGHUP means "re-read the active version": ignored until there is a server to do it.
    const trap = trapFor(ctx);
    trap.onHangup(() => {});
    const relayCfg = relayConfig(resolved, values['assistant-url'], ctx.env);
    const relay = relayCfg && (await import('../relay/routes.js')).createRelay({ ...relayCfg, resolved, limits, log: (line) => log(ctx, line) });
    try {
      const features = featureOptions(resolved, relay, { log: (line) => log(ctx, line) });
      // Mirror tokens and secret are read before any download: a bad file fails fast (exit 2).
      let warning: string[] | null = null;
      let bundle: object | null = null;
      const extras = await extraRoutes({
        settings: s, store, warning: () => warning, workers, features, log: (line) => log(ctx, line), onMirrorDownload: metrics?.mirrorDownload,
        follow: follower && (() => follower.status), bundle: () => bundle,
      });
      let listenPort = port;
      if (follower && (await (await import('../store/state.js')).readState(store)).active === null) {
        // An empty replica: hold the port (health 200, ready 503) until the mirror's version is in.
        const boot = await startBootstrap(port, host, () => `following ${s.follow!.url}: ${follower.status.error ?? 'getting its active version'}`)
          .catch((err: unknown) => { throw listenError(err, host, port); });
        log(ctx, `airlock serve: store ${store} has no active version: getting the mirror's (${s.follow!.url})`);
        try {
          const v = await follower.first(trap.signal);
          log(ctx, `airlock serve: follow: ${v} imported and active`);
        } catch (err) {
          if (trap.signal.aborted) return 0;
          throw err;
        } finally {
          await boot.close();
        }
        listenPort = boot.port;
      }
      const progress = new Progress(ctx.stderr, { interactive: ctx.interactive });
      const prepared = await prepareStart({
        settings: { ...s, version }, store, port: listenPort, host, worker: cluster.isWorker, log: (line) => progress.log(line), signal: trap.signal,
        onDownload: downloadReporter(progress, 'airlock serve: download'), onImport: metrics?.importDone,
        onWarning: (w) => { warning = w; }, onBundle: (b) => { bundle = b; },
      }).catch((err: unknown) => {
        if (trap.signal.aborted) return null; // stopped during the bundle download: the part is kept for the next start
        throw err;
      });
      // A background download reports its progress until it settles.
      if (prepared?.background) void prepared.background.finally(() => progress.end());
      else progress.end();
      if (prepared === null) return 0;
      warning = prepared.warning;
      const code = await runServer({
        server: { store, version: prepared.version, cacheBytes: cacheMb * 1024 * 1024, ...features, ...extras, metrics, skewGraceMs: Math.round(grace * 1000), basePath, tls: tls ?? undefined },
        port: prepared.port,
        host,
        workers,
        accessLog: values['access-log'],
        trap,
        hangup: 'reload',
        onUrl: (url) => out(ctx, url),
        log: (line) => log(ctx, line),
        attach: follower ? (srv) => {
          follower.start(fleet!.targetOf(srv));
          return follower;
        } : undefined,
      });
      await prepared.background; // stopped with the server (the trap's signal): its part is kept to resume
      return code;
    } finally {
      await relay?.close();
    }
  },
};
export default command;
