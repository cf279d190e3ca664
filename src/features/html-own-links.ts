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
 * The same-origin form of a URL on one of `own` origins, or null when it names another origin
 * (or none). Pure. The path keeps one leading slash: `https://docs.example.com//evil.example/x`
 * must become `/evil.example/x`, never the protocol-relative `//evil.example/x`, which would lead
 * to another site. Path, query and fragment come percent-encoded from the URL parser: no quote
 * or angle bracket survives into the attribute.
 */
export function sameOriginForm(raw: string, own: ReadonlySet<string>): string | null {
  const text = decodeAttr(raw).trim();
  let u: URL;
  try {
    u = new URL(text.startsWith('//') ? 'https:' + text : text);
  } catch {
    return null;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
  // A protocol-relative link takes the page's scheme: either of the site's schemes matches.
  const origins = text.startsWith('//') ? [u.origin, 'http:' + u.origin.slice('https:'.length)] : [u.origin];
  if (!origins.some((o) => own.has(o))) return null;
  return '/' + u.pathname.replace(/^\/+/, '') + u.search + u.hash;
}

/**
 * Elements and the attribute holding one URL a reader navigates to. Resources the page loads
 * (stylesheets, scripts, images) are not among them: an export often names files of the live
 * site that it does not hold, and those stay blocked by the CSP rather than turn into 404s.
 */
const URL_ATTRS: ReadonlyArray<[string, string]> = [
  ['a', 'href'],
  ['area', 'href'],
  ['iframe', 'src'],
  ['form', 'action'],
  ['button', 'formaction'],
];

/**
 * URLs of the site's own published address (`https://docs.example.com/guide/x`) that a reader
 * navigates to become same-origin (`/guide/x`), query and fragment kept: offline, the published
 * address is an error page, while this server holds the same pages. Links, frames, forms and a
 * meta refresh. URLs of any other origin stay as they are. Registered before the air-gapped
 * rules, which then see a same-origin frame or refresh and keep it.
 */
export function addOwnLinks(rw: HTMLRewriter, origins: readonly string[], done: Tally): void {
  const own = new Set(origins);
  const rewrite = (attr: string) => ({
    element: (el: Element) => {
      if (el.removed) return;
      const to = sameOriginForm(el.getAttribute(attr) ?? '', own);
      if (to === null) return;
      el.setAttribute(attr, to);
      tally(done, 'own-origin-link');
    },
  });
  for (const [tag, attr] of URL_ATTRS) rw.on(`${tag}[${attr}*="//"]`, rewrite(attr));
  rw.on('meta[http-equiv][content*="//"]', {
    element: (el: Element) => {
      if ((el.getAttribute('http-equiv') ?? '').trim().toLowerCase() !== 'refresh') return;
      const content = el.getAttribute('content') ?? '';
      const m = /^(\s*\d*\s*[;,]\s*url\s*=\s*)(['"]?)([^'"]*)\2\s*$/i.exec(decodeAttr(content));
      const to = m === null ? null : sameOriginForm(m[3]!, own);
      if (to === null) return;
      el.setAttribute('content', `${m![1]}${to}`);
      tally(done, 'own-origin-link');
    },
  });
}
