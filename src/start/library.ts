import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { AirlockServerOptions, AppEnv } from '../serve/index.js';
import type { Follower } from '../fleet/follow.js';
import { UsageError } from '../errors.js';
import { libraryConfig } from './library-config.js';
import { listenError, probeListen } from '../util/listen.js';
import { numberOption } from '../util/number-option.js';
import { whenAborted, type SignalTrap } from '../util/signals.js';
import { FLAG_RANGES, followUrlProblem } from '../values/settings.js';

/**
 * `airlock serve --library LIB`: every site of the library from one process (src/serve/library.ts),
 * each with the deployment type's features and its own local search. Options that make sense for
 * one store only (a pinned --version, --follow, --mirror, a values file's bundle) are refused in
 * words rather than applied to every site.
 */
/** Bytes of search indexes a library keeps loaded (a 100-page site's is about 100 KB). */
const SEARCH_BUDGET_BYTES = 256 * 1024 * 1024;

export interface LibraryServeOptions {
  /** serve's flags: --library, --site-host NAME=DOMAIN (repeatable), --deployment, --enable, --disable, --port, --host, --cache-mb, --values, --metrics, --mirror, --mirror-tokens, --follow with --trust, --allow-unsigned, --follow-poll-ms; any other is refused. */
  flags: {
    library?: string;
    'site-host'?: string[];
    deployment?: string;
    enable?: string[];
    disable?: string[];
    port?: string;
    host?: string;
    values?: string;
    metrics?: boolean;
    mirror?: boolean;
    'mirror-tokens'?: string;
    follow?: string;
    trust?: string[];
    'allow-unsigned'?: boolean;
    'follow-poll-ms'?: string;
  } & Record<string, unknown>;
  cacheMb?: number;
  cwd: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  onUrl: (url: string) => void;
  trap: () => SignalTrap;
}

export async function startLibrary(o: LibraryServeOptions): Promise<number> {
  const {
    library,
    'site-host': siteHost,
    deployment,
    enable,
    disable,
    port: givenPort,
    host: givenHost,
    values: valuesFile,
    metrics: withMetrics,
    mirror: withMirror,
    'mirror-tokens': mirrorTokens,
    follow: followUrl,
    trust: followTrust,
    'allow-unsigned': followUnsigned,
    'follow-poll-ms': followPollMs,
    'cache-mb': _cacheMb,
    ...rest
  } = o.flags;
  const refused = Object.entries(rest)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => `--${k}`);
  if (!library) throw new UsageError('--library is empty; give the library folder', { subject: '--library' });
  if (refused.length > 0)
    throw new UsageError(
      `--library serves every site of a library as it is; it does not take ${refused.join(', ')} (serve one site's store with --store for those)`,
      {
        subject: refused[0]!,
      },
    );
  if ((withMirror === true) !== (mirrorTokens !== undefined))
    throw new UsageError('--mirror and --mirror-tokens FILE go together', { subject: withMirror === true ? '--mirror-tokens' : '--mirror' });
  const file = valuesFile === undefined ? undefined : resolve(o.cwd, valuesFile);
  const loaded = file === undefined ? undefined : await (await import('../values/load.js')).loadValues(file);
  for (const w of loaded?.warnings ?? []) o.log(`airlock serve: warning: ${w}`);
  const config = libraryConfig({ 'site-host': siteHost, deployment, enable, disable, port: givenPort, host: givenHost }, loaded?.values, valuesFile ?? '');
  const host = config.host ?? '127.0.0.1';
  const port = numberOption(config.port, '--port', FLAG_RANGES.port) ?? 8080;
  await probeListen(host, port);
  const [{ createLibraryServer }, { featureOptions }, { BodyCache }, { PageWorkers, defaultPoolSize }, { workerSlot }, { oneAtATime }, { SearchPool }] =
    await Promise.all([
      import('../serve/library.js'),
      import('../serve/features.js'),
      import('../serve/body-cache.js'),
      import('../serve/html-cache/pool.js'),
      import('../serve/html-cache/worker-slot.js'),
      import('../serve/variants-later.js'),
      import('../search/pool.js'),
    ]);
  // Shared by every site: one memory budget for small files, one pool of HTML transform workers
  // (a page a reader waits for goes first, whichever site), one site's precompression at a time.
  const bodyCache = new BodyCache((o.cacheMb ?? 64) * 1024 * 1024);
  const pageWorkers = new PageWorkers(defaultPoolSize(), workerSlot);
  const inTurn = oneAtATime();
  // Every site's search index in one pool of workers (up to 2), at most 256 MB of indexes loaded: the least recently searched is let go.
  const searchPool = new SearchPool({ workers: Math.min(2, defaultPoolSize()), budgetBytes: SEARCH_BUDGET_BYTES });
  // --follow URL: every site of the library mirror at URL, each followed as one store's replica (token from the environment).
  const followWhy = followUrl === undefined ? null : followUrlProblem(followUrl);
  if (followWhy !== null) throw new UsageError(`--follow needs the library mirror's http(s) URL: ${followWhy}`, { subject: '--follow' });
  // A followed site's versions are its mirror's: a pinned version or a bundle of its own would fight the follower.
  const ownSource = followUrl === undefined ? undefined : [...config.sites].find(([, x]) => x.version !== undefined || x.bundle !== null);
  if (ownSource !== undefined)
    throw new UsageError(
      `--follow: every site's versions come from the mirror, but the values file gives library.sites (${ownSource[0]}) ${ownSource[1].bundle !== null ? 'a bundle (staticExport)' : `a pinned version (${ownSource[1].version})`}: remove it, or serve without --follow`,
      { subject: 'library.sites' },
    );
  if (followUrl === undefined && (followTrust !== undefined || followUnsigned !== undefined || followPollMs !== undefined))
    throw new UsageError('--trust, --allow-unsigned and --follow-poll-ms go with --follow', { subject: '--follow' });
  const pollMs = numberOption(followPollMs, '--follow-poll-ms', FLAG_RANGES['follow-poll-ms']);
  const fleet = followUrl === undefined ? null : await import('../fleet/index.js');
  const token = fleet === null ? null : await fleet.followToken(undefined, o.env);
  // --mirror: each site answers the export API for its own store, at its host names and under /<domain>.
  const mirror = mirrorTokens === undefined ? null : await libraryMirror(resolve(o.cwd, library!), resolve(o.cwd, mirrorTokens));
  // --metrics: one registry, every site's requests, served version and switches labelled by its domain.
  const metrics = withMetrics === true ? (await import('../serve/metrics.js')).createMetrics({ bySite: true }) : undefined;
  const trap = o.trap();
  trap.onHangup(() => {});
  // Sites whose bundles are still to be tried: /_airlock/ready is 503 until none is.
  const preparing = new Set([...config.sites].filter(([, x]) => x.bundle !== null).map(([d]) => d));
  // A site with a bundle and no folder yet answers 503 saying why (not 404), and is listed.
  const absent = new Map([...preparing].map((d) => [d, 'its bundle is being fetched']));
  const hasBundles = preparing.size > 0;
  const followed = followUrl?.replace(/\/+$/, '');
  const followMod = followed === undefined ? null : await import('./library-follow.js');
  if (followed !== undefined) preparing.add(followMod!.listingOf(followed));
  // The followed sites and their followers: /_airlock/ready names those out of step with the mirror.
  const followers = new Map<string, Follower>();
  if (hasBundles) await (await import('./library-bundles.js')).checkBundleKeys(config.sites, valuesFile ?? '');
  // A library filled at start (bundles, a mirror followed) may start as no folder at all.
  if (hasBundles || followUrl !== undefined) await mkdir(resolve(o.cwd, library!), { recursive: true });
  const lib = await createLibraryServer({
    preparing: () => [...preparing],
    readyNotes: followMod === null ? undefined : () => followMod.followNotes(followers),
    absent,
    library: resolve(o.cwd, library!),
    hosts: config.hosts,
    pinned: (domain) => config.sites.get(domain)?.version,
    log: o.log,
    metrics,
    // Each site its own features (its local search index is its own), made when the site is opened.
    siteOptions: async (domain) => {
      const log = (line: string) => o.log(line.replace(/^airlock serve: /, `airlock serve: ${domain}: `));
      // A site's search index is prepared at its first query: a site nobody searches costs no worker.
      // A switch is seen at once by the site's file watch; its poll (a stat of state.json, for file
      // systems that miss watch events) runs every 2 s, on one timer for every site (watcher.ts pollTogether).
      const own = config.sites.get(domain);
      const features = featureOptions(own?.resolved ?? config.defaults, null, { log, searchOnDemand: true, searchPool });
      return {
        ...features,
        ...(mirror ? await mirror(domain, features, log) : {}),
        ...(own?.version ? { version: own.version } : {}),
        ...(metrics ? { metrics: metrics.site(domain) } : {}),
        bodyCache,
        pageWorkers,
        inTurn,
        log,
        pollMs: 2000,
      };
    },
  });
  try {
    if (trap.signal.aborted) return 0;
    const url = await lib.listen(port, host).catch((err: unknown) => {
      throw listenError(err, host, port);
    });
    o.onUrl(url);
    o.log(`airlock serve: serving the library ${library!} at ${url}`);
    trap.onHangup(() => void lib.recheck());
    // Sites with a bundle (library.sites[].staticExport): fetched into their stores while the others serve.
    const bundles = hasBundles
      ? (await import('./library-bundles.js')).fetchSiteBundles({
          library: resolve(o.cwd, library!),
          sites: config.sites,
          signal: trap.signal,
          log: o.log,
          // The site's folder is read at once (not at the next poll): ready means its pages answer.
          tried: async (d, failure) => {
            await lib.recheck();
            if (failure === null) absent.delete(d);
            else absent.set(d, failure);
            preparing.delete(d);
          },
        })
      : null;
    const following =
      fleet === null
        ? null
        : followMod!.followLibrary({
            url: followed!,
            library: resolve(o.cwd, library!),
            lib,
            preparing,
            followed: followers,
            signal: trap.signal,
            log: o.log,
            follower: ({ mirror, store, site, log, inTurn }) =>
              new fleet.Follower({
                mirror,
                store,
                site,
                inTurn,
                token: token!,
                trust: (followTrust ?? []).map((t) => resolve(o.cwd, t)),
                allowUnsigned: followUnsigned === true,
                pollMs,
                log,
              }),
          });
    await whenAborted(trap.signal);
    o.log('airlock serve: shutting down: finishing in-flight requests');
    await bundles; // a download stops on the signal (its part is kept to resume)
    await following;
  } finally {
    await lib.close();
    await searchPool.close();
  }
  return 0;
}

/**
 * The mirror of a library: each site answers the service's static-export API for its own domain
 * from its own store, at its host names and under `/<domain>` (its links then carry that prefix).
 * The admin tokens are read once; each site signs its links with its own key, derived from one
 * random secret per process (a link for one site never opens another's package).
 */
async function libraryMirror(library: string, tokensFile: string) {
  const [{ createMirror, loadMirrorKeys }, { Hono }, { createHmac }, { prefixOf }] = await Promise.all([
    import('../mirror/index.js'),
    import('hono'),
    import('node:crypto'),
    import('../serve/library-respond.js'),
  ]);
  const keys = await loadMirrorKeys({ tokensFile });
  return async (domain: string, features: Pick<AirlockServerOptions, 'app'>, siteLog: (line: string) => void) => {
    const secret = createHmac('sha256', keys.secret).update(`airlock-library-site/1\n${domain}`).digest();
    const m = await createMirror({
      store: join(library, domain),
      keys: { ...keys, secret },
      tokensFile,
      log: siteLog,
      linkPrefix: (req) => prefixOf(req) ?? '',
    });
    const app = new Hono<AppEnv>();
    app.route('/', m.app);
    if (features.app) app.route('/', features.app);
    return { app, appPrefixes: m.appPrefixes };
  };
}
