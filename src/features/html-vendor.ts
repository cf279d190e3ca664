import type { Element, HTMLRewriter } from 'html-rewriter-wasm';
import { tally, type Tally } from './html-removal.js';
import { decodeAttr } from './html-attr.js';

/**
 * Vendoring: the page's references to third-party files the package carries (`fetch --vendor`)
 * point at their same-origin copies instead: `<link rel=stylesheet href>` and `<script src>`
 * whose URL (absolute https, protocol-relative, or a site stylesheet's root path) the map names.
 * An `integrity` attribute goes with the rewrite (a rewritten stylesheet has other bytes; the
 * copies were checked against the signed manifest at import). Runs in the page's one pass.
 */
export function vendorKey(raw: string): string | null {
  const v = decodeAttr(raw).trim();
  try {
    if (v.startsWith('//')) return withoutHash(new URL('https:' + v));
    if (/^https:\/\//i.test(v)) return withoutHash(new URL(v));
    if (v.startsWith('/')) return decodeURI(new URL(v, 'https://airlock.invalid').pathname);
  } catch {
    return null;
  }
  return null;
}

function withoutHash(u: URL): string {
  u.hash = '';
  return u.href;
}

export function addVendorMapping(rw: HTMLRewriter, map: Readonly<Record<string, string>>, done: Tally): void {
  const point = (attr: string) => (el: Element) => {
    if (el.removed) return;
    const key = vendorKey(el.getAttribute(attr) ?? '');
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
