import type { Element, HTMLRewriter } from 'html-rewriter-wasm';
import { tally, type Tally } from './html-removal.js';
import { decodeAttr } from './html-attr.js';

/**
 * Air-gapped: widgets that can only work online become plain links, never empty boxes.
 * - MkDocs Material's repository widget (`<a class="md-source" data-md-component="source">`):
 *   the theme's script finds it by `data-md-component` and fetches stars and forks from
 *   api.github.com; without that attribute it stays what it is underneath, a link to the
 *   repository showing its name.
 * - Video and map embeds (YouTube, youtube-nocookie, Vimeo, Google Maps): a link to the same
 *   content on its site, named by the frame's title (html-offline.ts replaces the frame).
 */
export function addOnlineOnlyWidgets(rw: HTMLRewriter, removed: Tally): void {
  rw.on('a.md-source[data-md-component]', {
    element: (el: Element) => {
      if (el.removed || (el.getAttribute('data-md-component') ?? '').trim().toLowerCase() !== 'source') return;
      el.removeAttribute('data-md-component');
      tally(removed, 'online-only-widget');
    },
  });
}

/**
 * Where the link that replaces an embed points, and the label of a known player: the content's
 * own page for a known video or map player, the embedded URL itself otherwise; `href` null for
 * anything but http(s) (a `javascript:` frame source never becomes a link).
 */
export function embedLink(raw: string): { href: string | null; label: string | null } {
  const v = decodeAttr(raw).trim();
  let u: URL;
  try {
    u = new URL(v.startsWith('//') ? 'https:' + v : v);
  } catch {
    return { href: null, label: null };
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return { href: null, label: null };
  const host = u.hostname.toLowerCase().replace(/^www\./, '');
  const id = (re: RegExp) => re.exec(u.pathname)?.[1];
  if (host === 'youtube.com' || host === 'youtube-nocookie.com') {
    const list = u.searchParams.get('list');
    if (u.pathname === '/embed/videoseries' && list)
      return { href: `https://www.youtube.com/playlist?list=${encodeURIComponent(list)}`, label: 'Video on YouTube' };
    const v = id(/^\/embed\/([A-Za-z0-9_-]{1,64})$/);
    if (v) return { href: `https://www.youtube.com/watch?v=${v}`, label: 'Video on YouTube' };
  }
  if (host === 'player.vimeo.com') {
    const v = id(/^\/video\/(\d{1,20})$/);
    if (v) return { href: `https://vimeo.com/${v}`, label: 'Video on Vimeo' };
  }
  if ((host === 'google.com' || host === 'maps.google.com') && u.pathname.startsWith('/maps')) {
    const q = u.searchParams.get('q');
    if (u.pathname.startsWith('/maps/embed/v1/') && q)
      return { href: `https://www.google.com/maps/search/?api=1&query=${encodeURIComponent(q)}`, label: 'Map on Google Maps' };
    if (u.searchParams.has('output')) u.searchParams.delete('output'); // maps?q=…&output=embed: the same map as a page
    return { href: u.href, label: 'Map on Google Maps' };
  }
  return { href: u.href, label: null };
}
