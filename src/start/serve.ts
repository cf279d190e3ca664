import cluster from 'node:cluster';
import { UsageError } from '../errors.js';
import { isOn, resolveFeatures } from '../features/resolve.js';
import { enableWithModel, modelConfig } from '../assistant/config.js';
import type { DownloadProgress } from '../fetch/download.js';
import { checkLabel } from '../package/label.js';
import { relayConfig } from '../relay/config.js';
import { DEFAULT_LIMITS } from '../relay/limits.js';
import { requireStore } from '../store/location.js';
import { resolveStore } from '../store/paths.js';
import { probeListen } from '../util/listen.js';
import { numberOption } from '../util/number-option.js';
import type { SignalTrap } from '../util/signals.js';
import { FLAG_RANGES, mergeSettings, type ServeFlags } from '../values/settings.js';
import type { TlsFiles } from '../serve/tls.js';

/**
 * `airlock serve` assembled from plain options: values file merged under the flags, TLS, metrics,
 * relays, the follower, the bundle download at start-up, then the server until the trap fires.
 * Start-up cost: what only some options need (the values reader, relays, metrics, TLS, the fleet,
 * the mirror, the download) is imported where they ask for it.
 */
export interface ServeOptions {
  /** The command line's flags, paths already resolved against the working directory. */
  flags: ServeFlags;
  /** The values file (serve --values), absolute. */
  valuesFile?: string;
  tlsFiles: TlsFiles | null;
  metrics: boolean;
  workers?: number;
  cacheMb?: number;
  rateLimitOrgHour?: number;
  rateLimitIpDay?: number;
  accessLog?: string;
  assistantUrl?: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  log: (line: string) => void;
  onUrl: (url: string) => void;
  /** Takes the command's signal trap over: from then on no signal ends the process before its clean-up. */
  trap: () => SignalTrap;
  /** The reporter of the start-up download, made once there may be one. */
  progress: () => Promise<StartProgress>;
}
export interface StartProgress {
  log(line: string): void;
  onDownload(p: DownloadProgress): void;
  end(): void;
}

export async function startServe(o: ServeOptions): Promise<number> {
  const tls = o.tlsFiles && { pair: await (await import('../serve/tls.js')).loadTlsPair(o.tlsFiles), files: o.tlsFiles };
  const metrics = o.metrics ? (await import('../serve/metrics.js')).createMetrics() : undefined;
  // Values file: flags given on the command line win over it, key by key.
  const loaded = o.valuesFile === undefined ? null : await (await import('../values/load.js')).loadValues(o.valuesFile);
  for (const w of loaded?.warnings ?? []) o.log(`airlock serve: warning: ${w}`);
  const s = mergeSettings(o.flags, loaded?.values);
  const model = { url: s.assistantModel, name: s.assistantModelName, enable: s.enable, disable: s.disable };
  const resolved = resolveFeatures({ deployment: s.deployment, enable: enableWithModel(model), disable: s.disable });
  const modelOptions = await modelConfig(model, isOn(resolved, 'local-assistant'), o.env, isOn(resolved, 'assistant'));
  const version = s.version === undefined ? undefined : checkLabel(s.version, 'version');
  const store = resolveStore(s.store, o.env, o.cwd);
  await (await import('../store/library.js')).notALibrary(store); // a library's folder is served with --library, never as a store
  // Only a bundle to download may create the store; otherwise a missing one is a wrong --store (exit 2).
  const workers = o.workers ?? 1;
  const grace = numberOption(s.skewGrace, '--skew-grace', FLAG_RANGES['skew-grace']) ?? 600;
  const basePath =
    s.basePath === undefined
      ? undefined
      : (await import('../serve/base-path.js')).parseBasePath(s.basePath, o.flags['base-path'] !== undefined ? '--base-path' : 'basePath');
  if (s.follow && workers > 1)
    throw new UsageError('--follow runs one process per replica (--workers 1): each worker would import on its own', { subject: '--follow' });
  if (s.follow && version !== undefined)
    throw new UsageError('--follow and a pinned --version exclude each other: a follower serves what the mirror activates', { subject: '--follow' });
  if (s.follow && s.staticExport?.bundleUrl)
    throw new UsageError('--follow and staticExport.bundleUrl exclude each other: a follower gets its versions from the mirror', { subject: '--follow' });
  if (!s.staticExport?.bundleUrl && !s.follow) await requireStore(store);
  // The follower (and the fleet code) loads only with --follow (start-up).
  const following = s.follow
    ? await (await import('./follow.js')).makeFollower(s, { store, env: o.env, log: o.log, onImport: metrics?.importDone, onRefused: metrics?.refused })
    : null;
  const follower = following?.follower ?? null;
  const host = s.host ?? '127.0.0.1';
  const limits = { orgPerHour: o.rateLimitOrgHour ?? DEFAULT_LIMITS.orgPerHour, ipPerDay: o.rateLimitIpDay ?? DEFAULT_LIMITS.ipPerDay };
  const port = numberOption(s.port, '--port', FLAG_RANGES.port) ?? 8080;
  const cacheMb = o.cacheMb ?? 64;
  if (cluster.isPrimary) await probeListen(host, port); // before a download or a long load
  const [{ featureOptions }, { runServer }, { extraRoutes }, { prepareStart }] = await Promise.all([
    import('../serve/features.js'),
    import('../serve/run.js'),
    import('./routes.js'),
    import('./prepare.js'),
  ]);
  // From here no signal ends the process before the lease is released and the relay closed.
  // SIGHUP means "re-read the active version": ignored until there is a server to do it.
  const trap = o.trap();
  trap.onHangup(() => {});
  const relayCfg = relayConfig(resolved, o.assistantUrl, o.env);
  const relay = relayCfg && (await import('../relay/routes.js')).createRelay({ ...relayCfg, resolved, limits, log: o.log });
  try {
    const assistant = modelOptions && (await import('../assistant/route.js')).localAssistantFor({ model: modelOptions, limits, log: o.log });
    const features = featureOptions(resolved, relay, { log: o.log, assistant });
    // Mirror tokens and secret are read before any download: a bad file fails fast (exit 2).
    let warning: string[] | null = null;
    let bundle: object | null = null;
    const extras = await extraRoutes({
      settings: s,
      store,
      warning: () => warning,
      workers,
      features,
      log: o.log,
      onMirrorDownload: metrics?.mirrorDownload,
      follow: follower && (() => follower.status),
      bundle: () => bundle,
    });
    const listenPort = follower
      ? await (await import('./follow.js')).fillEmptyReplica(follower, { url: s.follow!.url, store, port, host, signal: trap.signal, log: o.log })
      : port;
    if (listenPort === null) return 0;
    const progress = await o.progress();
    const prepared = await prepareStart({
      settings: { ...s, version },
      store,
      port: listenPort,
      host,
      worker: cluster.isWorker,
      log: (line) => progress.log(line),
      signal: trap.signal,
      onDownload: progress.onDownload,
      onImport: metrics?.importDone,
      onWarning: (w) => {
        warning = w;
      },
      onBundle: (b) => {
        bundle = b;
      },
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
      server: {
        store,
        version: prepared.version,
        cacheBytes: cacheMb * 1024 * 1024,
        ...features,
        ...extras,
        metrics,
        skewGraceMs: Math.round(grace * 1000),
        basePath,
        tls: tls ?? undefined,
      },
      port: prepared.port,
      anyPort: port === 0 && workers <= 1,
      host,
      workers,
      accessLog: o.accessLog,
      trap,
      hangup: 'reload',
      onUrl: o.onUrl,
      log: o.log,
      attach: following
        ? (srv) => {
            following.follower.start(following.fleet.targetOf(srv));
            return following.follower;
          }
        : undefined,
    });
    await prepared.background; // stopped with the server (the trap's signal): its part is kept to resume
    return code;
  } finally {
    await relay?.close();
  }
}
