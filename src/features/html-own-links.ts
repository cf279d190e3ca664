import type { Element, HTMLRewriter } from 'html-rewriter-wasm';
import { decodeAttr } from './html-attr.js';
import { tally, type Tally } from './html-removal.js';

/**
 * The site's own published origins, as `scheme://host[:port]` in lower case (WHATWG URL
 * `origin`). A link to one of them leaves the isolated network for a page this server holds.
 */
export function ownOrigin(url: string): string | null {
  try {
    const u = new URL(url.trim());
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin : null;
  } catch {
    return null;
  }
}

/**
 * Links to the site's own published address (`https://docs.example.com/guide/x`) become links on
 * this origin (`/guide/x`), query and fragment kept: offline, the published address is an error
 * page, while the server holds the same page. Anchors and image-map areas only: what a reader
 * follows. Links to any other origin stay as they are.
 */
export function addOwnLinks(rw: HTMLRewriter, origins: readonly string[], done: Tally): void {
  const own = new Set(origins);
  const rewrite = {
    element: (el: Element) => {
      if (el.removed) return;
      const raw = el.getAttribute('href') ?? '';
      const text = decodeAttr(raw).trim();
      let u: URL;
      try {
        u = new URL(text.startsWith('//') ? 'https:' + text : text);
      } catch {
        return;
      }
      // A protocol-relative link takes the page's scheme: either of the site's schemes matches.
      const origin = text.startsWith('//') ? [u.origin, 'http:' + u.origin.slice('https:'.length)] : [u.origin];
      if (!origin.some((o) => own.has(o))) return;
      // pathname, search and hash come percent-encoded from the URL parser: no quote or angle bracket.
      el.setAttribute('href', u.pathname + u.search + u.hash);
      tally(done, 'own-origin-link');
    },
  };
  rw.on('a[href*="//"]', rewrite);
  rw.on('area[href*="//"]', rewrite);
}
