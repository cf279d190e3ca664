/**
 * The deployment matrix (deployment types and the features each allows) as DATA: the
 * single source for the CLI's checks, `GET /_airlock/features`, the CSP, the HTML transform and
 * the relays. Change a cell here and every consumer follows; nothing else may hard-code it.
 */

export const DEPLOYMENTS = ['cloud', 'client-hosted', 'air-gapped'] as const;
export type Deployment = (typeof DEPLOYMENTS)[number];
export const DEFAULT_DEPLOYMENT: Deployment = 'air-gapped';

/** Feature names as the CLI spells them (`--enable api-playground`), in the contract's row order. */
export const FEATURES = ['search', 'assistant', 'analytics', 'api-playground', 'static-export', 'local-search', 'local-assistant'] as const;
export type Feature = (typeof FEATURES)[number];

/** The JSON keys of `/_airlock/features` and `window.__AIRLOCK_FEATURES__`, per feature. */
export const FEATURE_KEY = {
  search: 'search',
  assistant: 'assistant',
  analytics: 'analytics',
  'api-playground': 'apiPlayground',
  'static-export': 'staticExport',
  'local-search': 'localSearch',
  'local-assistant': 'localAssistant',
} as const satisfies Record<Feature, string>;
export type FeatureKey = (typeof FEATURE_KEY)[Feature];
export type FeatureFlags = { [K in FeatureKey]: boolean };

/** 'configurable' is off unless enabled with `--enable`. */
export type Availability = 'on' | 'configurable' | 'unavailable';

export const MATRIX: Readonly<Record<Feature, Readonly<Record<Deployment, Availability>>>> = {
  search: { cloud: 'on', 'client-hosted': 'configurable', 'air-gapped': 'unavailable' },
  assistant: { cloud: 'on', 'client-hosted': 'configurable', 'air-gapped': 'unavailable' },
  analytics: { cloud: 'on', 'client-hosted': 'configurable', 'air-gapped': 'unavailable' },
  'api-playground': { cloud: 'on', 'client-hosted': 'on', 'air-gapped': 'configurable' },
  'static-export': { cloud: 'on', 'client-hosted': 'on', 'air-gapped': 'on' },
  // airlock's own index of the served version, answered on the same origin (local search): it sends
  // nothing out, so it is on where the cloud search is unavailable, and an opt-in elsewhere.
  'local-search': { cloud: 'configurable', 'client-hosted': 'configurable', 'air-gapped': 'on' },
  // airlock's own answers to the service's assistant endpoint, from the served version's pages and
  // a model the organisation runs in its own network: on only when a model is configured
  // (serve --assistant-model turns it on; --disable local-assistant keeps it off).
  'local-assistant': { cloud: 'configurable', 'client-hosted': 'configurable', 'air-gapped': 'configurable' },
};

/**
 * Is this feature's widget kept in the served pages? While its feature is on; the service's
 * assistant widget also while local-assistant answers its endpoint on this origin.
 */
export function widgetKept(flags: FeatureFlags, f: Feature): boolean {
  return flags[FEATURE_KEY[f]] || (f === 'assistant' && flags.localAssistant);
}

/**
 * Features that cannot be switched off: static-export IS the site airlock serves, so
 * `--disable static-export` would mean "serve nothing" and is refused as a usage error.
 */
export const REQUIRED: ReadonlySet<Feature> = new Set<Feature>(['static-export']);

const CELL: Record<Availability, string> = {
  on: 'on',
  configurable: 'configurable (off unless enabled)',
  unavailable: 'unavailable',
};

/** The matrix (or some of its rows) as an aligned text table, for error messages and `--help`. */
export function formatMatrix(rows: readonly Feature[] = FEATURES): string {
  // local-assistant is on whenever a model is given (--assistant-model), in any deployment type
  const cell = (f: Feature, d: Deployment) =>
    f === 'local-assistant' && MATRIX[f][d] === 'configurable' ? 'configurable (needs a model)' : CELL[MATRIX[f][d]];
  const table = [['feature', ...DEPLOYMENTS], ...rows.map((f) => [f, ...DEPLOYMENTS.map((d) => cell(f, d))])];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  return table
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function isDeployment(v: string): v is Deployment {
  return (DEPLOYMENTS as readonly string[]).includes(v);
}

/** Accepts the CLI spelling and the JSON key (`api-playground` or `apiPlayground`). */
export function parseFeature(name: string): Feature | undefined {
  if ((FEATURES as readonly string[]).includes(name)) return name as Feature;
  return FEATURES.find((f) => FEATURE_KEY[f] === name);
}
