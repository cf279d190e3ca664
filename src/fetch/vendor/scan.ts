import { HTMLRewriter } from 'html-rewriter-wasm';
import type { VendorKind } from '../../package/index.js';
import { decodeAttr } from '../../features/html-attr.js';
import { cssRefs, resolveRef } from './css.js';

/** Finding what a site's pages and stylesheets load from other origins (vendoring), and what each file is. */

/** Hosts that serve web-font stylesheets (their `<link rel=stylesheet>` is a font, not a style). */
export const FONT_CSS_HOSTS: readonly string[] = [
  'fonts.googleapis.com',
  'fonts.bunny.net',
  'use.typekit.net',
  'fonts.cdnfonts.com',
  'api.fontshare.com',
  'rsms.me',
  'fast.fonts.net',
  'cloud.typography.com',
];
const FONT_EXT = /\.(woff2?|ttf|otf)$/i;
/** The origin the site's own paths are resolved against (never fetched). */
export const LOCAL = 'https://airlock.invalid/';

export const isFontCss = (url: string) => FONT_CSS_HOSTS.includes(new URL(url).hostname);

/** The extension a vendored file is carried under, from what it is (magic bytes first, then the type). */
export function extensionOf(bytes: Buffer, contentType: string, as: 'css' | 'script' | 'asset'): string | null {
  const ct = contentType.split(';')[0]!.trim().toLowerCase();
  if (as === 'css') return ct === 'text/css' || ct === 'text/plain' || ct === '' ? 'css' : null;
  if (as === 'script') return /^(text|application)\/(x-)?(javascript|ecmascript)$/.test(ct) || ct === 'text/plain' ? 'js' : null;
  const magic = bytes.subarray(0, 4).toString('latin1');
  if (magic === 'wOF2') return 'woff2';
  if (magic === 'wOFF') return 'woff';
  if (magic === 'OTTO') return 'otf';
  if (magic === '\x00\x01\x00\x00' || magic === 'true') return 'ttf';
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'jpg';
  if (magic === 'GIF8') return 'gif';
  if (magic === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  if (ct === 'image/svg+xml') return 'svg';
  return null;
}

export interface Found {
  url: string;
  kind: VendorKind;
  as: 'css' | 'script' | 'asset';
}

/** External references of one page: stylesheets and scripts. */
export async function scanHtml(html: Buffer, found: (f: Found) => void, report: (url: string) => void, refs?: string[]): Promise<void> {
  const rw = new HTMLRewriter(() => {});
  const external = (raw: string): string | null => {
    const v = decodeAttr(raw).trim();
    if (/^\/\//.test(v)) return resolveRef(v, 'https://x/');
    if (/^https:\/\//i.test(v)) return resolveRef(v, 'https://x/');
    if (/^http:\/\//i.test(v)) {
      report(v);
      return null;
    }
    return null;
  };
  rw.on('link[href]', {
    element: (el) => {
      const rel = (el.getAttribute('rel') ?? '').toLowerCase().split(/\s+/);
      if (!rel.includes('stylesheet')) return;
      refs?.push(el.getAttribute('href') ?? '');
      const u = external(el.getAttribute('href') ?? '');
      if (u) found({ url: u, kind: isFontCss(u) ? 'fonts' : 'styles', as: 'css' });
    },
  });
  rw.on('script[src]', {
    element: (el) => {
      refs?.push(el.getAttribute('src') ?? '');
      const u = external(el.getAttribute('src') ?? '');
      if (u) found({ url: u, kind: 'scripts', as: 'script' });
    },
  });
  try {
    await rw.write(html);
    await rw.end();
  } finally {
    rw.free();
  }
}

/** External references of one of the site's own stylesheets (`path` inside the site). */
export function scanSiteCss(path: string, text: string, found: (f: Found) => void, report: (url: string) => void): void {
  for (const r of cssRefs(text)) {
    const u = resolveRef(r.url, LOCAL + path);
    if (u === null || u.startsWith(LOCAL)) continue;
    if (u.startsWith('http://')) {
      report(u);
      continue;
    }
    if (!u.startsWith('https://')) continue;
    if (r.via === 'import') found({ url: u, kind: isFontCss(u) ? 'fonts' : 'styles', as: 'css' });
    else found({ url: u, kind: FONT_EXT.test(new URL(u).pathname) ? 'fonts' : 'styles', as: 'asset' });
  }
}
