import { StoreError } from '../errors.js';
import { resolveFeatures, type ResolvedFeatures } from '../features/index.js';
import { acquireLease } from '../store/leases.js';
import { htmlContextFor } from './html-context.js';
import { openPages } from './html-pages.js';
import { loadFromStore } from './source.js';

export interface PrebuildReport {
  key: string;
  pages: number;
  built: number;
}

/**
 * Build a stored version's served-HTML cache ahead of any server (called by `airlock import`
 * after the commit, beside the variants), for `resolved` — by default the deployment `serve`
 * runs with no flags: air-gapped, nothing enabled. A server started with the same options then
 * loads the version without transforming a page. Resumable: pages already cached are kept.
 * Holds a lease so prune leaves the version alone meanwhile.
 */
export async function prebuildHtmlCache(
  store: string,
  label: string,
  o: { resolved?: ResolvedFeatures; poolSize?: number; signal?: AbortSignal } = {},
): Promise<PrebuildReport> {
  const lease = await acquireLease(store, label);
  try {
    const src = await loadFromStore(store, label);
    const scratch = () =>
      Promise.reject(new StoreError('AIRLOCK_STORE_READONLY', `cannot write the HTML cache into version ${label} of ${store}`, { subject: store }));
    const r = await openPages(src, { context: htmlContextFor(o.resolved ?? resolveFeatures({})) }, { scratch, log: () => {}, poolSize: o.poolSize });
    // A stop asked for ends the build at once: pages under way finish, queued ones are dropped.
    const stop = () => void r.stop();
    if (o.signal?.aborted)
      stop(); // before the listener: an aborted signal fires no event
    else o.signal?.addEventListener('abort', stop, { once: true });
    const { built, failed } = await r.done.finally(() => o.signal?.removeEventListener('abort', stop));
    o.signal?.throwIfAborted();
    if (failed.length > 0)
      throw new StoreError('AIRLOCK_HTML_TRANSFORM', `cannot prepare the HTML of version ${label}: ${failed.slice(0, 3).join('; ')}`, { subject: label });
    return { key: r.key!, pages: r.ready.size + r.later.size, built };
  } finally {
    await lease.release();
  }
}
