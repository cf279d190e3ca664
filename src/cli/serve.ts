import { parse, parseIntFlag, checkVersionLabel } from './args.js';
import { log, type CliContext } from './context.js';
import type { Command } from './main.js';
import { resolveFeatures, formatMatrix } from '../features/index.js';
import { resolveStore } from '../store/index.js';
import { featureOptions } from '../serve/features.js';
import { runServer } from '../serve/run.js';
import { createRelay, relayConfig, DEFAULT_LIMITS } from '../relay/index.js';

const usage = `usage: airlock serve [--store DIR] [--version V] [--deployment TYPE] [--enable F,...] [--disable F,...]
                     [--port N] [--host H] [--workers N] [--access-log FILE|-] [--cache-mb N]
                     [--assistant-url URL] [--rate-limit-org-hour N] [--rate-limit-ip-day N]

Serve the store's active version (or --version V, pinned: activation is then ignored).
Unpinned servers switch to a newly activated version within 1 s (also on SIGHUP).
SIGTERM/SIGINT: stop accepting, finish in-flight requests, exit 0. Prints the URL on stdout.

  --store DIR          store folder (default $AIRLOCK_STORE, else ./airlock-store)
  --deployment TYPE    cloud | client-hosted | air-gapped (default air-gapped)
  --enable/--disable   feature list (search, assistant, analytics, api-playground, static-export)
  --port N             default 8080 (0: any free port)
  --host H             default 127.0.0.1 (0.0.0.0 to serve the network)
  --workers N          processes sharing the port (default 1)
  --access-log F       one JSON line per request to F ('-' = stderr); off by default
  --cache-mb N         memory budget for small files (default 64)

Search and assistant, where on (cloud; client-hosted with --enable), are relayed on this origin
(POST /discovery/v2/assistant/DOMAIN/message, GET|POST /discovery/v2/search/DOMAIN): bodies are
checked against the service's schema, rate limits applied, then forwarded with the key from
AIRLOCK_ASSISTANT_KEY (an assistant key svc_dsc_...; missing or wrong: exit 5).
  --assistant-url URL       the service's base URL for the relay (default $AIRLOCK_API_URL)
  --rate-limit-org-hour N   relayed requests per hour for the whole site (default ${DEFAULT_LIMITS.orgPerHour})
  --rate-limit-ip-day N     relayed requests per client IP per day (default ${DEFAULT_LIMITS.ipPerDay})

Deployment matrix:
${formatMatrix()}
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
    }, false);
    const resolved = resolveFeatures({ deployment: values.deployment, enable: values.enable, disable: values.disable });
    const version = values.version === undefined ? undefined : checkVersionLabel(values.version);
    const limits = {
      orgPerHour: parseIntFlag(values['rate-limit-org-hour'], '--rate-limit-org-hour', 1) ?? DEFAULT_LIMITS.orgPerHour,
      ipPerDay: parseIntFlag(values['rate-limit-ip-day'], '--rate-limit-ip-day', 1) ?? DEFAULT_LIMITS.ipPerDay,
    };
    const relayCfg = relayConfig(resolved, values['assistant-url'], ctx.env);
    const relay = relayCfg && createRelay({ ...relayCfg, resolved, limits, log: (line) => log(ctx, line) });
    return runServer({
      server: {
        store: resolveStore(values.store, ctx.env, ctx.cwd),
        version,
        cacheBytes: (parseIntFlag(values['cache-mb'], '--cache-mb', 1, 1 << 20) ?? 64) * 1024 * 1024,
        ...featureOptions(resolved, relay),
      },
      port: parseIntFlag(values.port, '--port', 0, 65535) ?? 8080,
      host: values.host ?? '127.0.0.1',
      workers: parseIntFlag(values.workers, '--workers', 1, 64) ?? 1,
      accessLog: values['access-log'],
      onUrl: (url) => ctx.stdout.write(url + '\n'),
      log: (line) => log(ctx, line),
      onClosed: () => relay?.close() ?? Promise.resolve(),
    });
  },
};
export default command;
