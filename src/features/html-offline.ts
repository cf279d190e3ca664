import type { Element, HTMLRewriter } from 'html-rewriter-wasm';
import { tally, type Tally } from './html-removal.js';
import { addOnlineOnlyWidgets, embedLink } from './html-online-only.js';
import { decodeAttr } from './html-attr.js';

/** `<link rel>` tokens that make the browser connect, resolve or fetch ahead of use. */
const HINTS = new Set(['preconnect', 'dns-prefetch', 'prefetch', 'preload', 'modulepreload', 'prerender']);
/** An absolute or protocol-relative URL: another origin (an export never names the origin it is served from). */
const OFF_ORIGIN = /^\s*(?:[a-z][a-z0-9+.-]*:)?\/\//i;

/** An attribute's raw source text (lol-html does not decode entities) made safe inside "…" and as text. */
function escapeHtml(s: string): string {
  return s.replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A URL (parsed and serialised: no quote or angle bracket left) as an attribute value. */
const escapeUrl = (href: string) => href.replace(/&/g, '&amp;').replace(/"/g, '%22');

/** An absolute URL of a scheme that is not the web's (javascript:, data:, vbscript:…), as a browser parses it (entities, tabs). */
function nonWebScheme(raw: string): boolean {
  try {
    const p = new URL(decodeAttr(raw).trim()).protocol;
    return p !== 'http:' && p !== 'https:';
  } catch {
    return false; // relative: a frame of this site
  }
}

/**
 * Air-gapped: what would reach another origin although the page's CSP blocks the fetch itself.
 * Chromium connects before any CSP check for resource hints (preconnect, dns-prefetch, ...) and
 * for frame navigations (an `<iframe src>` to a video platform opens a connection that frame-src
 * then refuses: seen in test/browser/third-party.test.ts), and a meta refresh navigates the
 * whole page away. So in air-gapped HTML:
 * - hints to other origins are removed;
 * - `<iframe>`/`<frame>`/`<embed>`/`<object>` of other origins are replaced by a link: to the
 *   same content on its site for a known video or map player (html-online-only.ts), to the
 *   embedded URL otherwise, and by plain text when that URL is not http(s);
 * - online-only widgets (html-online-only.ts) become plain links;
 * - a `<meta http-equiv="refresh">` to another origin is removed.
 */
export function addOfflineHandlers(rw: HTMLRewriter, removed: Tally): void {
  rw.on('link[rel][href*="//"]', {
    element: (el: Element) => {
      const rel = (el.getAttribute('rel') ?? '').toLowerCase().split(/\s+/);
      if (!el.removed && rel.some((r) => HINTS.has(r)) && OFF_ORIGIN.test(el.getAttribute('href') ?? '')) {
        el.remove();
        tally(removed, 'off-origin-hint');
      }
    },
  });
  const embed = (attr: string) => ({
    element: (el: Element) => {
      const url = el.getAttribute(attr) ?? '';
      if (el.removed || !(OFF_ORIGIN.test(url) || nonWebScheme(url))) return;
      const title = (el.getAttribute('title') ?? '').trim();
      const { href, label } = embedLink(url);
      if (href !== null && label !== null) {
        // A known video or map player: a link to the same content, named by the frame's title.
        el.replace(`<a href="${escapeUrl(href)}" rel="noreferrer" data-airlock="embed-link">${escapeHtml(title || label)}</a>`, { html: true });
      } else {
        const text = `${escapeHtml(title || el.tagName)} (embedded from another site, not available here)`;
        el.replace(
          href === null
            ? `<span data-airlock="embed-removed">${text}</span>`
            : `<a href="${escapeUrl(href)}" rel="noreferrer" data-airlock="embed-removed">${text}</a>`,
          { html: true },
        );
      }
      tally(removed, 'off-origin-embed');
    },
  });
  for (const tag of ['iframe', 'frame', 'embed']) rw.on(`${tag}[src]`, embed('src'));
  rw.on('object[data]', embed('data'));
  addOnlineOnlyWidgets(rw, removed);
  rw.on('meta[http-equiv][content*="//"]', {
    element: (el: Element) => {
      if ((el.getAttribute('http-equiv') ?? '').trim().toLowerCase() !== 'refresh') return;
      const url = /url\s*=\s*['"]?([^'"]*)/i.exec(el.getAttribute('content') ?? '')?.[1] ?? '';
      if (OFF_ORIGIN.test(url)) {
        el.remove();
        tally(removed, 'off-origin-refresh');
      }
    },
  });
}
