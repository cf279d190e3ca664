import { DEFAULT_DEPLOYMENT, DEPLOYMENTS, FEATURES, formatMatrix } from '../features/matrix.js';
import { DEFAULT_LIMITS } from '../relay/limits.js';
import type { NumberRange } from '../util/number-option.js';
import { FLAG_RANGES } from '../values/settings.js';

/** `airlock serve`'s help text and the ranges of its numeric flags (src/cli/serve.ts parses them). */

export const usage = `usage: airlock serve [--values FILE] [--store DIR | --library LIB [--site-host NAME=DOMAIN]...] [--version V] [--deployment TYPE] [--enable F,...] [--disable F,...]
                     [--port N] [--host H] [--workers N] [--access-log FILE|-] [--cache-mb N] [--metrics] [--mirror --mirror-tokens FILE]
                     [--assistant-url URL] [--assistant-model URL --assistant-model-name NAME] [--rate-limit-org-hour N] [--rate-limit-ip-day N]
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
  --mirror             also answer the service's static-export API for the store's versions (docs/mirror.md);
                       with --library, each site for its own, also under /<domain>
  --mirror-tokens F    file of allowed mirror admin tokens, one sha256:<hex> per line
  --store DIR          store folder (default $AIRLOCK_STORE, else ./airlock-store)
  --version V          serve version V, pinned (activation is then ignored)
  --library LIB        serve every site of the library LIB (airlock import --library), each at the
                       Host of its domain and at /DOMAIN/; / lists them. Sites are opened on their
                       first request and switched, added and removed while serving (docs/library.md)
  --site-host N=D      with --library: the host name N also reaches site D (repeatable)
                       A values file gives a library's sites their own settings: library.sites, a
                       list of {domain, hosts, version (pinned), deployment.type, features}
  --enable F,...       turn on configurable features (${FEATURES.join(', ')})
  --disable F,...      turn off features (static-export, the site itself, stays on)
  --deployment TYPE    ${DEPLOYMENTS.join(' | ')} (default ${DEFAULT_DEPLOYMENT})
  --port N             default 8080 (0: any free port)
  --host H             default 127.0.0.1 (0.0.0.0 to serve the network)
  --workers N          processes sharing the port (default 1)
  --access-log F       one JSON line per request to F ('-' = stderr); off by default
  --cache-mb N         memory budget for small files (default 64)
  --metrics            GET /_airlock/metrics in Prometheus text format (requests by method and status
                       class, latency, bytes, served version, switches, imports, mirror downloads;
                       with --library, requests, served version and switches by site)
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
                       With --library: every site of a library mirror, each into its own store
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
  --assistant-model URL --assistant-model-name NAME   local-assistant, in any deployment: that assistant endpoint answered
                            here from the served pages by your own OpenAI-compatible model (key: $AIRLOCK_ASSISTANT_MODEL_KEY[_FILE])
  --rate-limit-org-hour N   relayed or locally answered requests per hour for the whole site (default ${DEFAULT_LIMITS.orgPerHour})
  --rate-limit-ip-day N     relayed or locally answered requests per client IP per day (default ${DEFAULT_LIMITS.ipPerDay})

Deployment matrix:
${formatMatrix()}

Exit codes: 0 stopped by a signal, 1 failure (e.g. the port is taken: nothing is left behind),
2 usage or a bad values file, 4 the values file's bundle failed verification, 5 a wrong or missing
assistant key.
`;

/** serve's numeric flags and their ranges: every one is checked before anything is read or started. */
export const NUMBERS = {
  ...FLAG_RANGES,
  workers: { min: 1, max: 64 },
  'cache-mb': { min: 1, max: 1 << 20 },
  'rate-limit-org-hour': { min: 1, max: 1_000_000_000 },
  'rate-limit-ip-day': { min: 1, max: 1_000_000_000 },
} as const satisfies Record<string, NumberRange>;
