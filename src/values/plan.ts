/**
 * Start-up decision of `airlock serve` with a values file (pure; src/start/prepare.ts runs it).
 * The chart's promise: `staticExport.version` pins a reproducible rollout, `bundleUrl` is fetched
 * on start and becomes the active version. Order: a pinned version already in the store is served
 * with no network at all; otherwise download; a failed download falls back to the active version
 * only when nothing is pinned (a pin that cannot be honoured must not silently serve another).
 */
import { describeHoldings } from '../store/holdings.js';

export interface PlanInput {
  version?: string;
  /** Started with a values file (`serve --values`): only then do messages name its keys. */
  values?: boolean;
  bundleUrl?: string;
  /** A cluster worker: the primary already did any download and activation. */
  worker: boolean;
}
export interface StoreView {
  active: string | null;
  labels: readonly string[];
}

export type Plan =
  | { kind: 'serve'; version?: string; why: string }
  | { kind: 'download'; url: string; label?: string; fallback: string | null }
  | { kind: 'fail'; message: string; subject: string };

export function planStart(i: PlanInput, s: StoreView, store: string): Plan {
  const pinned = i.version;
  if (pinned !== undefined && s.labels.includes(pinned))
    return { kind: 'serve', version: pinned, why: `pinned version ${pinned} is in the store: no download` };
  if (i.bundleUrl !== undefined && !i.worker) return { kind: 'download', url: i.bundleUrl, label: pinned, fallback: pinned === undefined ? s.active : null };
  const held = describeHoldings(store, s.labels, { activate: pinned === undefined });
  if (pinned !== undefined) {
    if (!i.values) return { kind: 'fail', subject: pinned, message: `version ${pinned} is not in store ${store}${held.empty ? ': ' : '; '}${held.text}` };
    return {
      kind: 'fail',
      subject: pinned,
      message:
        `pinned version ${pinned} is not in store ${store} and there is no staticExport.bundleUrl to download it from; ` +
        `import it first (airlock import PKG --store ${store}), set staticExport.bundleUrl, or pin a version the store has${s.labels.length ? ` (${s.labels.join(', ')})` : ''}`,
    };
  }
  if (s.active !== null) return { kind: 'serve', why: `serving the store's active version ${s.active}` };
  const what = held.empty
    ? `store ${store} holds no version yet; import one (airlock import PKG --store ${store} --activate)`
    : `store ${store} has no active version; ${held.text}: activate one (airlock activate V --store ${store})`;
  return { kind: 'fail', subject: store, message: i.values ? `${what}, or set staticExport.bundleUrl in the values file to download one` : what };
}

/**
 * After a failed download (pure): what to serve, or the error to end with. `refused`: the bundle
 * arrived but its content was refused (unsafe, corrupt, unsigned), so a fresh link would not help.
 */
export function afterFailure(
  plan: Extract<Plan, { kind: 'download' }>,
  reason: string,
  store: string,
  refused = false,
): { serve: string | null; message: string } {
  if (plan.fallback !== null) {
    return {
      serve: plan.fallback,
      message: `could not install the bundle from staticExport.bundleUrl (${reason}); SERVING THE PREVIOUSLY ACTIVE VERSION ${plan.fallback} INSTEAD`,
    };
  }
  const what = plan.label !== undefined ? `pinned version ${plan.label} is not in store ${store}` : `store ${store} has no active version to fall back on`;
  return {
    serve: null,
    message:
      `nothing to serve: ${what}, and the bundle could not be installed from staticExport.bundleUrl: ${reason}. ` +
      (refused
        ? 'The bundle itself was refused: point bundleUrl at a sound export or package and restart, or import a package with airlock import PKG --activate'
        : 'Bundle links expire: regenerate the link (or point bundleUrl at an in-network mirror) and restart, or import a package with airlock import PKG --activate'),
  };
}
