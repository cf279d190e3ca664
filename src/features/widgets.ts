import { UsageError } from '../errors.js';
import type { Feature } from './matrix.js';

/**
 * How a feature shows up in an exported page, so that it can be taken out when the feature is off.
 * - selectors: CSS selectors of the feature's elements. They are REMOVED from served HTML (with
 *   their content), and also hidden with an injected `display:none!important` rule, which covers
 *   elements the page's own code adds at run time and selectors the streaming rewriter cannot
 *   match (sibling combinators, pseudo-classes: see html-widgets.ts). Defaults fit the service's
 *   export (`data-airlock-feature`, `#search-bar`, `#assistant-widget`) and the docs platforms
 *   we know (Mintlify, Algolia DocSearch/Docusaurus, kapa.ai).
 * - scripts: `<script src>` patterns (matched on the URL path) that load ONLY this feature's
 *   widget and are removed with it. Defaults: the service export's standalone widget chunks
 *   (`/_next/static/chunks/search-<hash>.js`, `assistant-<hash>.js`, plain scripts that look up
 *   their element and do nothing without it), Algolia DocSearch's and kapa.ai's loaders. A
 *   bundler chunk that other code imports must never be listed (the page would break).
 */
export interface FeatureWidgets {
  selectors: string[];
  scripts: RegExp[];
}

export const DEFAULT_WIDGETS: Readonly<Record<Feature, FeatureWidgets>> = {
  search: {
    selectors: ['[data-airlock-feature~="search"]', '#search-bar', '#search-bar-entry', '#search-bar-entry-mobile', '.DocSearch-Button', '#docsearch'],
    scripts: [/^\/(?:[^/]+\/)*_next\/static\/chunks\/search-[0-9a-f]{8,}\.js$/, /\/@docsearch\/js(?:@[^/]*)?\//],
  },
  assistant: {
    selectors: ['[data-airlock-feature~="assistant"]', '#assistant-widget', '#assistant-entry', '#assistant-entry-mobile', '#kapa-widget-container'],
    scripts: [/^\/(?:[^/]+\/)*_next\/static\/chunks\/assistant-[0-9a-f]{8,}\.js$/, /\/kapa-widget\.bundle\.js$/],
  },
  // Consent managers only exist for the trackers: OneTrust's settings button and banner, Cookiebot's dialog.
  analytics: { selectors: ['[data-airlock-feature~="analytics"]', '#ot-sdk-btn', '#onetrust-consent-sdk', '#CybotCookiebotDialog'], scripts: [] },
  'api-playground': {
    selectors: ['[data-airlock-feature~="api-playground"]', '#api-playground', '.api-playground'],
    scripts: [],
  },
  'static-export': { selectors: [], scripts: [] },
  // airlock's own dialog is injected only while local-search is on: when off there is nothing to hide.
  'local-search': { selectors: [], scripts: [] },
  // Answers the service's assistant widget (kept while local-assistant is on); airlock's own panel is injected
  // only while it is on (and gives way to that widget): nothing of its own to hide.
  'local-assistant': { selectors: [], scripts: [] },
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
    throw new UsageError(
      `invalid hide selector ${JSON.stringify(sel)}: must be a non-empty CSS selector without { } < ; @ \\ or comments`,
      {
        subject: sel,
      },
      'AIRLOCK_BAD_SELECTOR',
    );
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
