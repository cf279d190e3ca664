import { UsageError } from '../errors.js';
import type { Feature } from './matrix.js';

/**
 * How a feature shows up in an exported page, so that it can be hidden when the feature is off.
 * - selectors: CSS selectors hidden with an injected `display:none!important` rule. Defaults fit
 *   the service's export (`data-airlock-feature`, `#search-bar`, `#assistant-widget`) and the
 *   docs platforms we know (Mintlify, Algolia DocSearch/Docusaurus, kapa.ai).
 * - scripts: `<script src>` patterns (matched on the URL path) that belong ONLY to this feature and
 *   may be removed when it is off. Empty by default on purpose: dropping a bundler chunk that the
 *   runtime still imports breaks the page, so this is opt-in per site.
 */
export interface FeatureWidgets {
  selectors: string[];
  scripts: RegExp[];
}

export const DEFAULT_WIDGETS: Readonly<Record<Feature, FeatureWidgets>> = {
  search: {
    selectors: ['[data-airlock-feature~="search"]', '#search-bar', '#search-bar-entry', '#search-bar-entry-mobile',
      '.DocSearch-Button', '#docsearch'],
    scripts: [],
  },
  assistant: {
    selectors: ['[data-airlock-feature~="assistant"]', '#assistant-widget', '#assistant-entry', '#assistant-entry-mobile',
      '#kapa-widget-container'],
    scripts: [],
  },
  analytics: { selectors: ['[data-airlock-feature~="analytics"]'], scripts: [] },
  'api-playground': {
    selectors: ['[data-airlock-feature~="api-playground"]', '#api-playground', '.api-playground'],
    scripts: [],
  },
  'static-export': { selectors: [], scripts: [] },
};

/** Per-feature overrides from configuration; a given list REPLACES the default list. */
export type WidgetOverrides = Partial<Record<Feature, Partial<FeatureWidgets>>>;

// A selector goes verbatim into a <style> element: anything that could end the rule, open a new
// one, or close the element (`</style>`) would let configuration inject arbitrary CSS/HTML.
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused here
const UNSAFE_SELECTOR = /[{}<;@\\]|\/\*|[\u0000-\u001f\u007f]/;

export function checkSelector(sel: string): string {
  const s = sel.trim();
  if (s === '' || UNSAFE_SELECTOR.test(s)) {
    throw new UsageError(`invalid hide selector ${JSON.stringify(sel)}: must be a non-empty CSS selector without { } < ; @ \\ or comments`, {
      subject: sel,
    }, 'AIRLOCK_BAD_SELECTOR');
  }
  return s;
}

export function widgetsFor(feature: Feature, overrides: WidgetOverrides = {}): FeatureWidgets {
  const o = overrides[feature] ?? {};
  return {
    selectors: (o.selectors ?? DEFAULT_WIDGETS[feature].selectors).map(checkSelector),
    scripts: o.scripts ?? DEFAULT_WIDGETS[feature].scripts,
  };
}
