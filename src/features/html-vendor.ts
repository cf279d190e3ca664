import type { Element, HTMLRewriter } from 'html-rewriter-wasm';
import { tally, type Tally } from './html-removal.js';
import { decodeAttr } from './html-attr.js';

/**
 * Vendoring: the page's references to third-party files the package carries (`fetch --vendor`)
 * point at their same-origin copies instead: `<link rel=stylesheet href>` and `<script src>`
 * whose URL (absolute https, protocol-relative, or a site stylesheet's root path, written as such or
 * relative to the page's path) the map names.
 * An `integrity` attribute goes with the rewrite (a rewritten stylesheet has other bytes; the
 * copies were checked against the signed manifest at import). Runs in the page's one pass.
 */
export function vendorKey(raw: string, pagePath?: string): string | null {
  const v = decodeAttr(raw).trim();
  try {
    if (v.startsWith('//')) return withoutHash(new URL('https:' + v));
    if (/^https:\/\//i.test(v)) return withoutHash(new URL(v));
    if (v.startsWith('/')) return decodeURI(new URL(v, LOCAL).pathname);
    // A relative reference (no scheme): resolved against the page's own path, as the browser does
    // (`..` above the site root stops at the root).
    if (pagePath !== undefined && v !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(v)) return decodeURI(new URL(v, LOCAL + pagePath).pathname);
  } catch {
    return null;
  }
  return null;
}

const LOCAL = 'https://airlock.invalid/';

function withoutHash(u: URL): string {
  u.hash = '';
  return u.href;
}

/** `pagePath`: the page's path inside the site (`guide/deep/page.html`), for relative references. */
export function addVendorMapping(rw: HTMLRewriter, map: Readonly<Record<string, string>>, done: Tally, pagePath?: string): void {
  const point = (attr: string) => (el: Element) => {
    if (el.removed) return;
    const key = vendorKey(el.getAttribute(attr) ?? '', pagePath);
    const to = key === null || !Object.hasOwn(map, key) ? undefined : map[key];
    if (to === undefined) return;
    el.setAttribute(attr, to);
    el.removeAttribute('integrity');
    tally(done, 'vendored');
  };
  rw.on('link[rel][href]', {
    element: (el) => {
      if ((el.getAttribute('rel') ?? '').toLowerCase().split(/\s+/).includes('stylesheet')) point('href')(el);
    },
  });
  rw.on('script[src]', { element: point('src') });
}

/** The same-origin script that maps run-time loads of vendored URLs to their copies (serve answers it per version). */
export const VENDOR_MAP_SCRIPT = '/_airlock/vendor-map.js';

/**
 * Its tag, first in `<head>` (before any of the site's scripts runs), when the version carries
 * vendored third-party URLs; '' otherwise. Not `defer`/`async`: it must run before the page's scripts.
 */
export function vendorMapTag(map: Readonly<Record<string, string>> | undefined): string {
  return map !== undefined && Object.keys(map).some((k) => k.startsWith('https://'))
    ? `<script src="${VENDOR_MAP_SCRIPT}" data-airlock="vendor-map"></script>`
    : '';
}
