import { Hono } from 'hono';
import { cspFor, failFastResponse, featureForPath, featuresDocument, isOn, type Feature, type ResolvedFeatures } from '../features/index.js';
import { htmlContextFor } from './html-context.js';
import { LocalSearch } from '../search/service.js';
import type { SearchPool } from '../search/pool.js';
import { searchRoutes } from './search/route.js';
import { searchAssets } from './search/ui.js';
import { assistantAssets } from './assistant/ui.js';
import type { AppEnv } from './app.js';
import type { LoadedIndex } from './version-index.js';
import type { AirlockServerOptions } from './server.js';

/** Relays (src/relay) to mount for features that are on: their routes and the paths they answer. */
export interface RelayMount {
  app: Hono<AppEnv>;
  claims(method: string, path: string): boolean;
  /** The server is shutting down: end long answers now (local-assistant's streams), before connections are waited for. */
  close?(): void;
  /** Each version swapped in (local-assistant names only pages the served version has). */
  onVersion?(idx: LoadedIndex): void;
}

/**
 * The server options a deployment type implies (src/features is the single source): the
 * `/_airlock/features` document, the CSP (with the hashes of the inline code the HTML transform
 * kept), the HTML transform itself (once per version), and fail-fast 404s for calls of features
 * that are off. Relays for features that are on (src/relay) are mounted after the fail-fast
 * guard; while relaying, the page's docs-api-base is '/' so the browser calls this origin only.
 */
export function featureOptions(
  resolved: ResolvedFeatures,
  relay?: RelayMount | null,
  o: {
    log?: (line: string) => void;
    searchOnDemand?: boolean;
    searchPool?: SearchPool;
    /** local-assistant (src/assistant): its routes, given the local search it retrieves from; used when the feature is on. */
    assistant?: ((search: LocalSearch) => RelayMount) | null;
  } = {},
): Pick<AirlockServerOptions, 'features' | 'csp' | 'htmlTransform' | 'appRoute' | 'app' | 'onVersion' | 'onClosing' | 'onClose' | 'localSearch'> {
  const doc = featuresDocument(resolved);
  // local-search: the index is prepared in a search worker, off the critical path; the dialog
  // script and its API are same-origin. local-assistant retrieves from the same index.
  const answers = isOn(resolved, 'local-assistant') ? (o.assistant ?? null) : null;
  const search =
    isOn(resolved, 'local-search') || answers ? new LocalSearch({ log: o.log ?? ((l) => process.stderr.write(l + '\n')), pool: o.searchPool }) : null;
  const local = answers && search ? answers(search) : null;
  // The service's assistant endpoint answered here by local-assistant: not a feature that is off.
  const on = (f: Feature, method: string, path: string) => isOn(resolved, f) || (local !== null && local.claims(method, path));
  const off = (method: string, path: string) => {
    const f = featureForPath(method, path);
    return f !== null && !on(f, method, path);
  };
  const app = new Hono<AppEnv>();
  app.all('*', (c, next) => {
    const f = featureForPath(c.req.method, c.req.path);
    if (f === null || on(f, c.req.method, c.req.path)) return next();
    const r = failFastResponse(f, resolved.deployment);
    return c.body(r.body, r.status, r.headers);
  });
  if (relay) app.route('/', relay.app);
  if (local) app.route('/', local.app);
  if (search && isOn(resolved, 'local-search')) {
    app.route('/', searchAssets());
    app.route('/', searchRoutes(search));
  }
  // local-assistant's panel (for exports without an assistant widget of their own): same-origin files, injected while it is on.
  if (isOn(resolved, 'local-assistant')) app.route('/', assistantAssets());
  return {
    ...(search
      ? {
          onVersion: (idx) => (search.use(idx.source, idx.preparing?.htmlDone, o.searchOnDemand), local?.onVersion?.(idx)),
          onClose: () => search.close(),
          localSearch: search,
        }
      : {}),
    ...(local?.close ? { onClosing: () => local.close!() } : {}),
    features: () => doc,
    csp: ({ scriptHashes, styleHashes }) => cspFor(resolved, { scriptHashes, styleHashes }),
    // Run on worker threads at load and cached on disk per options (html-pages.ts).
    // The assistant's calls go to this origin while relayed or answered here (local-assistant): its widget stays, docs-api-base '/'.
    htmlTransform: { context: htmlContextFor(resolved, { relayed: Boolean(relay) || local !== null }) },
    appRoute: relay || local ? (method, path) => off(method, path) || Boolean(relay?.claims(method, path)) || Boolean(local?.claims(method, path)) : off,
    app,
  };
}
