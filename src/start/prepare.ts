import { AirlockError, EXIT, StoreError, toAirlockError } from '../errors.js';
import { listVersions } from '../store/list.js';
import { readState } from '../store/state.js';
import { listenError } from '../util/listen.js';
import type { DownloadProgress } from '../fetch/index.js';
import { startBootstrap } from './bootstrap.js';
import type { installBundle } from '../store/bundle-install.js';
import { afterFailure, planStart } from '../values/plan.js';
import type { ServeSettings } from '../values/settings.js';

/**
 * Runs the start-up plan (I/O), then tells serve what to serve. With a version already active
 * (and nothing pinned) the bundle downloads in the background while that version is served; with
 * nothing to serve yet, a bootstrap listener answers health/ready on the port meanwhile. Never
 * leaves a half-imported version: importPackage is all-or-nothing, so a refused or broken bundle
 * changes nothing.
 */
export interface PrepareOptions {
  settings: ServeSettings;
  store: string;
  port: number;
  host: string;
  worker: boolean;
  log: (line: string) => void;
  /** The command's stop signal: a download in progress stops (its part is kept to resume) and no fallback is served. */
  signal?: AbortSignal;
  onDownload?: (p: DownloadProgress) => void;
  /** Seconds the bundle's download, verification and import took (metrics). */
  onImport?: (seconds: number, result: 'ok' | 'failed') => void;
  /** A download in the background failed: the fallback warning (for /_airlock/ready), set after start. */
  onWarning?: (lines: string[]) => void;
  /** The bundle's state for /_airlock/ready while the store's active version is served. */
  onBundle?: (status: BundleStatus) => void;
}
export interface BundleStatus {
  state: 'downloading' | 'installed' | 'failed';
  url: string;
  since: string;
  version?: string;
  error?: string;
}
export interface Prepared {
  /** Pinned version to serve (undefined: the store's active one). */
  version?: string;
  /** The port the bootstrap listener got (differs from the asked one only for port 0). */
  port: number;
  /** Lines of the fallback warning, also shown by /_airlock/ready. */
  warning: string[] | null;
  /**
   * A download running while the store's active version is served (settles, never rejects, once it
   * is imported and activated — the server switches to it on its own — or has failed, or was stopped).
   */
  background: Promise<void> | null;
}

/** The loud lines of a fallback: logged, and shown by /_airlock/ready. */
function fallbackWarning(e: AirlockError, serve: string, log: (line: string) => void): string[] {
  const warning = [
    'WARNING: the bundle from staticExport.bundleUrl could not be installed.',
    `  reason: ${e.code}: ${e.message}`,
    `  SERVING THE PREVIOUSLY ACTIVE VERSION ${serve} INSTEAD — the content may be out of date.`,
    '  Regenerate the bundle link (links expire) or fix the bundle, then restart.',
  ];
  const bar = '*'.repeat(72);
  for (const line of [bar, ...warning, bar]) log(`airlock serve: ${line}`);
  return warning;
}

export async function prepareStart(o: PrepareOptions): Promise<Prepared> {
  const state = await readState(o.store);
  const labels = (await listVersions(o.store)).map((v) => v.version);
  const se = o.settings.staticExport;
  const plan = planStart(
    { version: o.settings.version, bundleUrl: se?.bundleUrl, worker: o.worker, values: o.settings.valuesFile },
    { active: state.active, labels },
    o.store,
  );
  if (plan.kind === 'fail') throw new StoreError('AIRLOCK_NOTHING_TO_SERVE', plan.message, { subject: plan.subject });
  if (plan.kind === 'serve') {
    o.log(`airlock serve: ${plan.why}`);
    return { version: plan.version, port: o.port, warning: null, background: null };
  }
  let phase = 'downloading the bundle';
  // The download and import code (undici, the package reader) loads only for a bundle to get (start-up).
  const install = async () =>
    (await import('../store/bundle-install.js')).installBundle({
      url: plan.url,
      store: o.store,
      label: plan.label,
      domain: se!.domain,
      trust: se!.trust,
      allowUnsigned: se!.allowUnsigned,
      limits: se!.limits,
      maxBytes: se!.maxBytes,
      activate: plan.label === undefined,
      signal: o.signal,
      onProgress: o.onDownload,
      log: (l) => {
        phase = l.replace(/^airlock serve: /, '');
        o.log(l);
      },
    });
  const t0 = performance.now();
  const imported = (r: Awaited<ReturnType<typeof installBundle>>) => {
    o.onImport?.((performance.now() - t0) / 1000, 'ok');
    o.log(
      `airlock serve: ${r.status === 'imported' ? 'imported' : 'already had'} version ${r.version} from the bundle (${r.form})${plan.label === undefined ? ', now active' : ''}`,
    );
  };
  if (plan.fallback !== null) {
    // The store has a good version: serve it now (ready 200) and let the download run; the
    // import activates the new version atomically and the server switches to it on its own.
    const fallback = plan.fallback;
    const u = new URL(plan.url);
    const url = `${u.origin}${u.pathname}`; // never the query: it is the link's credential
    const since = () => new Date().toISOString();
    o.log(`airlock serve: serving the store's active version ${fallback} while the bundle downloads`);
    o.onBundle?.({ state: 'downloading', url, since: since() });
    const background = install().then(
      (r) => {
        imported(r);
        o.onBundle?.({ state: 'installed', url, since: since(), version: r.version });
      },
      (err: unknown) => {
        if (o.signal?.aborted) return;
        o.onImport?.((performance.now() - t0) / 1000, 'failed');
        const e = toAirlockError(err);
        o.onBundle?.({ state: 'failed', url, since: since(), error: `${e.code}: ${e.message}` });
        o.onWarning?.(fallbackWarning(e, fallback, o.log));
      },
    );
    return { version: undefined, port: o.port, warning: null, background };
  }
  const boot = await startBootstrap(o.port, o.host, () => phase).catch((err: unknown) => {
    throw listenError(err, o.host, o.port);
  });
  o.log(`airlock serve: starting at ${boot.url} (health 200, ready 503 until a version is served)`);
  try {
    imported(await install());
    return { version: plan.label, port: boot.port, warning: null, background: null };
  } catch (err) {
    if (o.signal?.aborted) throw err;
    o.onImport?.((performance.now() - t0) / 1000, 'failed');
    const e = toAirlockError(err);
    const refused = e.exitCode === EXIT.VERIFICATION;
    const after = afterFailure(plan, e.message, o.store, refused);
    if (after.serve === null) throw new AirlockError(e.code, after.message, refused ? EXIT.VERIFICATION : EXIT.FAILURE, e.details, { cause: err });
    return { version: undefined, port: boot.port, warning: fallbackWarning(e, after.serve, o.log), background: null };
  } finally {
    await boot.close();
  }
}
