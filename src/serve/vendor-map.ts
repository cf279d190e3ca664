import { vendorMap, type VendorFile } from './source.js';

/**
 * `/_airlock/vendor-map.js` (vendoring): the carried copies also answer what pages load at run
 * time. A page's scripts add `<script src>` and `<link href>` elements, call `fetch`, open an
 * XHR or build a `FontFace` naming a third-party URL; this script (same origin, so the page's
 * `'self'` CSP admits it; serve puts it first in `<head>`) points each vendored URL at its copy
 * under `/_airlock/vendor/`. Anything it does not map is left to the CSP, which blocks it.
 * Not covered: ES module `import()` of a third-party URL (no hook exists for it in a page).
 */
export function vendorMapScript(vendor: readonly VendorFile[]): string | null {
  const map: Record<string, string> = {};
  for (const [k, v] of Object.entries(vendorMap(vendor))) if (k.startsWith('https://')) map[k] = v;
  if (Object.keys(map).length === 0) return null;
  // JSON is valid JavaScript; `<` escaped anyway so the text never reads as markup.
  const json = JSON.stringify(map).replace(/</g, '\\u003c');
  return `/* airlock: vendored third-party URLs → their same-origin copies */
(() => {
  'use strict';
  const map = ${json};
  const own = Object.prototype.hasOwnProperty;
  const to = (u) => {
    try {
      const a = new URL(String(u), document.baseURI);
      a.hash = '';
      return own.call(map, a.href) ? map[a.href] : null;
    } catch (e) {
      return null;
    }
  };
  const point = (el, v) => {
    const m = to(v);
    if (m === null) return v;
    el.removeAttribute('integrity'); // the copy was checked against the signed manifest
    return m;
  };
  const wrap = (proto, attr) => {
    const d = Object.getOwnPropertyDescriptor(proto, attr);
    if (!d || !d.set) return;
    Object.defineProperty(proto, attr, { configurable: true, enumerable: d.enumerable, get: d.get, set(v) { d.set.call(this, point(this, v)); } });
  };
  wrap(HTMLScriptElement.prototype, 'src');
  wrap(HTMLLinkElement.prototype, 'href');
  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    const n = String(name).toLowerCase();
    if ((n === 'src' && this instanceof HTMLScriptElement) || (n === 'href' && this instanceof HTMLLinkElement)) value = point(this, value);
    return setAttribute.call(this, name, value);
  };
  const fetch0 = window.fetch;
  if (fetch0) {
    window.fetch = function (input, init) {
      if (input instanceof Request) {
        const m = to(input.url);
        if (m !== null) input = new Request(m, input);
      } else {
        const m = to(input);
        if (m !== null) input = m;
      }
      return fetch0.call(this, input, init);
    };
  }
  const open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    const m = to(url);
    return open.call(this, method, m === null ? url : m, ...rest);
  };
  const FF = window.FontFace;
  if (FF) {
    const mapped = function FontFace(family, source, descriptors) {
      if (typeof source === 'string') source = source.replace(/url\\(\\s*(['"]?)([^'")]*)\\1\\s*\\)/g, (all, q, u) => { const m = to(u); return m === null ? all : 'url("' + m + '")'; });
      return new FF(family, source, descriptors);
    };
    mapped.prototype = FF.prototype;
    window.FontFace = mapped;
  }
})();
`;
}
