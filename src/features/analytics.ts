import { decodeAttr } from './html-attr.js';
import { ANALYTICS_VENDORS, type AnalyticsVendor } from './analytics-vendors.js';

export { ANALYTICS_VENDORS, type AnalyticsVendor } from './analytics-vendors.js';

// Matching URLs, script tags and inline snippets against the vendor table (analytics-vendors.ts).

/** Same-origin path prefixes of analytics scripts and collection endpoints (for fail-fast). */
export const ANALYTICS_PATH_PREFIXES: readonly string[] = ANALYTICS_VENDORS.flatMap((v) => v.pathPrefixes ?? []);

const BASE = 'https://airlock.invalid/';

function hostMatches(host: string, hosts: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return hosts.some((v) => h === v || h.endsWith(`.${v}`));
}

/** The vendor a URL (absolute, protocol-relative or same-origin path) belongs to, if any. */
export function vendorForUrl(url: string, vendors: readonly AnalyticsVendor[] = ANALYTICS_VENDORS): AnalyticsVendor | undefined {
  let u: URL;
  try {
    u = new URL(url.trim(), BASE);
  } catch {
    return undefined;
  }
  const sameOrigin = u.origin === new URL(BASE).origin;
  return vendors.find((v) =>
    sameOrigin
      ? (v.pathPrefixes ?? []).some((p) => u.pathname.startsWith(p))
      : hostMatches(u.hostname, v.hosts) || (v.files ?? []).some((re) => re.test(u.pathname)),
  );
}

/**
 * The vendor a `<script src>` belongs to, if any: by its URL (vendorForUrl), else by the vendor's
 * own tag shape on any host (an attribute of its snippet and its script's path, `tags`).
 */
export function vendorForScript(
  raw: string,
  attr: (name: string) => string | null,
  vendors: readonly AnalyticsVendor[] = ANALYTICS_VENDORS,
): AnalyticsVendor | undefined {
  const src = decodeAttr(raw); // as the browser reads it: `/js/scr&#105;pt.js` is /js/script.js
  const byUrl = vendorForUrl(src, vendors);
  if (byUrl) return byUrl;
  let path: string;
  try {
    path = new URL(src.trim(), BASE).pathname;
  } catch {
    return undefined;
  }
  return vendors.find((v) => (v.tags ?? []).some((t) => attr(t.attr) !== null && t.src.test(path)));
}

/** The vendor whose bootstrap snippet this inline script text is, if any. */
export function vendorForSnippet(text: string, vendors: readonly AnalyticsVendor[] = ANALYTICS_VENDORS): AnalyticsVendor | undefined {
  return vendors.find((v) => v.snippets.some((re) => re.test(text)));
}

/** The vendor whose host or own file name appears anywhere in a short text (a `<noscript>` body), if any. */
export function vendorInText(text: string, vendors: readonly AnalyticsVendor[] = ANALYTICS_VENDORS): AnalyticsVendor | undefined {
  const lower = text.toLowerCase();
  return vendors.find((v) => v.hosts.some((h) => lower.includes(h)) || (v.files ?? []).some((re) => re.test(lower)));
}
