import type { Element, HTMLRewriter } from 'html-rewriter-wasm';
import { vendorForScript, vendorForSnippet, vendorForUrl, vendorInText, type AnalyticsVendor } from './analytics.js';
import type { RawTextBuffer } from './rawtext.js';
import { mayBeSnippet, scriptKind } from './script-kinds.js';

/** What the transform took out, by reason (`analytics:<vendor id>`, `feature-script`, ...). */
export type Tally = Record<string, number>;

/** Count one removal; returns false so a RawTextBuffer decision can `return tally(...)`. */
export function tally(t: Tally, key: string): false {
  t[key] = (t[key] ?? 0) + 1;
  return false;
}

/**
 * True to keep an inline script. Screens it against the vendors' snippet signatures — except
 * data blocks and framework payloads, which only quote page content (see script-kinds.ts).
 */
export function screenSnippet(text: string, type: string | null, vendors: readonly AnalyticsVendor[], removed: Tally): boolean {
  if (scriptKind(type) === 'data' || !mayBeSnippet(text)) return true;
  const v = vendorForSnippet(text, vendors);
  return v === undefined ? true : tally(removed, `analytics:${v.id}`);
}

interface RemovalOptions {
  analyticsOff: boolean;
  /** `<script src>` path patterns of features that are off (widgets.ts `scripts`). */
  offScripts: readonly RegExp[];
  vendors: readonly AnalyticsVendor[];
  raw: RawTextBuffer;
  removed: Tally;
}

/** A value for a double-quoted CSS attribute selector string. */
function cssString(v: string): string {
  return v.replace(/["\\]/g, (c) => `\\${c}`);
}

function pathOf(url: string): string {
  try {
    return new URL(url.trim(), 'https://airlock.invalid/').pathname;
  } catch {
    return url;
  }
}

/**
 * When analytics is off: vendor `<script src>`, resource hints and preloads (`<link href>`),
 * tracking pixels (`<img>`, `<iframe>`) and `<noscript>` fallbacks that name a vendor host go.
 * Scripts of other features that are off go when their widgets table lists them.
 */
export function addRemovalHandlers(rw: HTMLRewriter, o: RemovalOptions): void {
  const scriptSrc = {
    element: (el: Element) => {
      if (el.removed) return; // matched by more than one selector
      const src = el.getAttribute('src') ?? '';
      const v = o.analyticsOff ? vendorForScript(src, (name) => el.getAttribute(name), o.vendors) : undefined;
      if (v) {
        el.remove();
        tally(o.removed, `analytics:${v.id}`);
      } else if (o.offScripts.some((re) => re.test(pathOf(src)))) {
        el.remove();
        tally(o.removed, 'feature-script');
      }
    },
  };
  // Each handler call crosses from wasm to JS, so selectors are as narrow as the rules allow:
  // vendor hosts need an absolute or protocol-relative URL (both contain "//"), vendor
  // first-party paths have fixed prefixes; only feature-script patterns need every src.
  if (o.offScripts.length > 0) rw.on('script[src]', scriptSrc);
  else if (o.analyticsOff) {
    rw.on('script[src*="//"]', scriptSrc);
    for (const p of o.vendors.flatMap((v) => v.pathPrefixes ?? [])) rw.on(`script[src^="${cssString(p)}"]`, scriptSrc);
    // Self-hosted trackers known by their tag's own attribute (data-domain, data-website-id), on any host.
    for (const a of new Set(o.vendors.flatMap((v) => (v.tags ?? []).map((t) => t.attr)))) rw.on(`script[src][${a}]`, scriptSrc);
  }
  if (!o.analyticsOff) return;

  const byUrl = (attr: string) => ({
    element: (el: Element) => {
      const v = vendorForUrl(el.getAttribute(attr) ?? '', o.vendors);
      if (v && !el.removed) {
        el.remove();
        tally(o.removed, `analytics:${v.id}`);
      }
    },
  });
  rw.on('link[href*="//"]', byUrl('href'));
  rw.on('img[src*="//"]', byUrl('src'));
  rw.on('iframe[src*="//"]', byUrl('src'));
  // With scripting on, browsers (and lol-html) read <noscript> as raw text; its pixels are only
  // fetched with scripting off — still a request to the vendor, so the fallback goes too.
  rw.on('noscript', {
    element: () =>
      o.raw.begin((text) => {
        const v = vendorInText(text, o.vendors);
        return v === undefined ? true : tally(o.removed, `analytics:${v.id}`);
      }, true),
    text: (t) => o.raw.text(t),
  });
}
