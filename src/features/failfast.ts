import { ANALYTICS_PATH_PREFIXES } from './analytics.js';
import { MATRIX, type Deployment, type Feature } from './matrix.js';

/**
 * Same-origin paths that the exported site calls for a feature, most specific first. The
 * service's discovery API is versioned (`/discovery/v2/...`); only versioned paths are claimed,
 * so a docs page that happens to live under `/discovery/` is still served as a page.
 * Unknown discovery endpoints count as search, the discovery family's base feature.
 */
const RULES: ReadonlyArray<{ feature: Feature; match: (path: string) => boolean }> = [
  { feature: 'assistant', match: (p) => /^\/discovery\/v\d+\/assistant(\/|$)/.test(p) },
  { feature: 'search', match: (p) => /^\/discovery\/v\d+\/search(\/|$)/.test(p) },
  { feature: 'search', match: (p) => /^\/discovery\/v\d+(\/|$)/.test(p) },
  { feature: 'analytics', match: (p) => ANALYTICS_PATH_PREFIXES.some((prefix) => p.startsWith(prefix)) },
  // airlock's own local search (its API and its dialog script): 404 when local-search is off.
  { feature: 'local-search', match: (p) => p === '/_airlock/search.js' || p === '/_airlock/search.css' || p.startsWith('/_airlock/search/') },
  // airlock's own assistant panel (its script and stylesheet): 404 when local-assistant is off.
  { feature: 'local-assistant', match: (p) => p === '/_airlock/assistant.js' || p === '/_airlock/assistant.css' },
];

/**
 * The feature a request belongs to, or null for an ordinary site request. Any method: the
 * assistant is POST, search GET or POST, analytics beacons POST. The path must already be
 * percent-decoded and normalised by the server's router (it is matched literally here).
 */
export function featureForPath(_method: string, path: string): Feature | null {
  const p = path.split('?')[0]!;
  return RULES.find((r) => r.match(p))?.feature ?? null;
}

export interface FailFastResponse {
  status: 404;
  headers: Record<string, string>;
  body: string;
}

/**
 * The immediate answer for a feature that is off: unavailable in the deployment type (the matrix),
 * or turned off (or not enabled) by the server's configuration for this site.
 */
export function failFastResponse(feature: Feature, deployment: Deployment): FailFastResponse {
  const why =
    MATRIX[feature][deployment] === 'unavailable' ? `${feature} is not available in ${deployment} deployments` : `${feature} is turned off for this site`;
  return {
    status: 404,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
    body: JSON.stringify({ error: why }),
  };
}
