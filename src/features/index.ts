/** src/features — the deployment matrix and what it does to served pages; pure, no I/O. */
export * from './matrix.js';
export { resolveFeatures, featuresDocument, featuresJson, isOn, type ResolvedFeatures, type ResolveInput, type FeaturesDocument } from './resolve.js';
export { ANALYTICS_VENDORS, ANALYTICS_PATH_PREFIXES, vendorForUrl, vendorForSnippet, vendorInText, type AnalyticsVendor } from './analytics.js';
export { DEFAULT_WIDGETS, widgetsFor, checkSelector, type FeatureWidgets, type WidgetOverrides } from './widgets.js';
export {
  LOCAL_SEARCH_SCRIPT,
  LOCAL_ASSISTANT_SCRIPT,
  cspHash,
  featuresScript,
  featuresMeta,
  hideStyle,
  hiddenSelectors,
  headInjection,
  type InlineCode,
} from './inject.js';
export { transformHtml, transformHtmlDetailed, type TransformContext, type TransformResult } from './html.js';
export { ownOrigin } from './html-own-links.js';
export { cspFor, type CspOptions } from './csp.js';
export { featureForPath, failFastResponse, type FailFastResponse } from './failfast.js';
export { createPagePolicy, type PagePolicy } from './page-policy.js';
export { VENDOR_MAP_SCRIPT } from './html-vendor.js';
