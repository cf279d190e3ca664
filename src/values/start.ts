import { AirlockError, EXIT, StoreError, toAirlockError } from '../errors.js';
import { listVersions, readState } from '../store/index.js';
import { listenError } from '../util/listen.js';
import type { DownloadProgress } from '../fetch/index.js';
import { startBootstrap } from './bootstrap.js';
import { installBundle } from './bundle.js';
import { afterFailure, planStart } from './plan.js';
import type { ServeSettings } from './settings.js';

/**
 * Runs the start-up plan (I/O): maybe download and install the bundle while a bootstrap listener
 * answers health/ready on the port, then tell serve what to serve. Never leaves a half-imported
 * version: importPackage is all-or-nothing, so a refused or broken bundle changes nothing.
 */
export interface PrepareOptions {
  settings: ServeSettings; store: string; port: number; host: string; worker: boolean;
  log: (line: string) => void;
  /** The command's stop signal: a download in progress stops (its part is kept to resume) and no fallback is served. */
  signal?: AbortSignal;
  onDownload?: (p: DownloadProgress) => void;
  /** Seconds the bundle's download, verification and import took (metrics). */
  onImport?: (seconds: number, result: 'ok' | 'failed') => void;
}
export interface Prepared {
  /** Pinned version to serve (undefined: the store's active one). */
  version?: string;
  /** The port the bootstrap listener got (differs from the asked one only for port 0). */
  port: number;
  /** Lines of the fallback warning, also shown by /_airlock/ready. */
  warning: string[] | null;
}

export async function prepareStart(o: PrepareOptions): Promise<Prepared> {
  const state = await readState(o.store);
  const labels = (await listVersions(o.store)).map((v) => v.version);
  const se = o.settings.staticExport;
  const plan = planStart({ version: o.settings.version, bundleUrl: se?.bundleUrl, worker: o.worker }, { active: state.active, labels }, o.store);
  if (plan.kind === 'fail') throw new StoreError('AIRLOCK_NOTHING_TO_SERVE', plan.message, { subject: plan.subject });
  if (plan.kind === 'serve') {
    o.log(`airlock serve: ${plan.why}`);
    return { version: plan.version, port: o.port, warning: null };
  }
  let phase = 'downloading the bundle';
  const boot = await startBootstrap(o.port, o.host, () => phase).catch((err: unknown) => { throw listenError(err, o.host, o.port); });
  o.log(`airlock serve: starting at ${boot.url} (health 200, ready 503 until a version is served)`);
  const t0 = performance.now();
  try {
    const r = await installBundle({
      url: plan.url, store: o.store, label: plan.label, domain: se!.domain, trust: se!.trust, allowUnsigned: se!.allowUnsigned,
      activate: plan.label === undefined, signal: o.signal, onProgress: o.onDownload, log: (l) => { phase = l.replace(/^airlock serve: /, ''); o.log(l); },
    });
    o.onImport?.((performance.now() - t0) / 1000, 'ok');
    o.log(`airlock serve: ${r.status === 'imported' ? 'imported' : 'already had'} version ${r.version} from the bundle (${r.form})${plan.label === undefined ? ', now active' : ''}`);
    return { version: plan.label, port: boot.port, warning: null };
  } catch (err) {
    if (o.signal?.aborted) throw err;
    o.onImport?.((performance.now() - t0) / 1000, 'failed');
    const e = toAirlockError(err);
    const after = afterFailure(plan, `${e.code}: ${e.message}`, o.store);
    if (after.serve === null) throw new AirlockError(e.code, after.message, e.exitCode === EXIT.VERIFICATION ? EXIT.VERIFICATION : EXIT.FAILURE, e.details, { cause: err });
    const warning = [
      'WARNING: the bundle from staticExport.bundleUrl could not be installed.',
      `  reason: ${e.code}: ${e.message}`,
      `  SERVING THE PREVIOUSLY ACTIVE VERSION ${after.serve} INSTEAD — the content may be out of date.`,
      '  Regenerate the bundle link (links expire) or fix the bundle, then restart.',
    ];
    const bar = '*'.repeat(72);
    for (const line of [bar, ...warning, bar]) o.log(`airlock serve: ${line}`);
    return { version: undefined, port: boot.port, warning };
  } finally {
    await boot.close();
  }
}
