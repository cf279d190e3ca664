/** Vendoring third-party files (--vendor): the flags and the collector (flags.ts), the scan (collect.ts), the fetches (get.ts), the browser (observe.ts). */
export {
  vendorFlags,
  vendorAsk,
  vendorCollector,
  observeLine,
  parseKinds,
  parseMirror,
  type VendorFlags,
  type ObserveFlags,
  type VendorArgs,
} from './flags.js';
export { collectVendored, BROWSER_UA } from './collect.js';
export { extensionOf, FONT_CSS_HOSTS } from './scan.js';
export { cssRefs, rewriteCss, resolveRef } from './css.js';
export { vendorGet, target } from './get.js';
export { observePages, samplePages, type ObserveReport } from './observe.js';
export { CHROMIUM_ARGS, DEFAULT_CHROMIUM } from './chromium.js';
