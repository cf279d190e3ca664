/**
 * What the in-page scripts of local search and the assistant panel share (ES5, inside their
 * `String.raw` templates): their stylesheet linked into the page, `el(tag, attrs, text)` that
 * builds an element with attributes and text only (never HTML), and `domain()`, the served site's
 * domain from `/_airlock/version` (asked once), for the endpoints on this origin.
 */
export const clientBasics = (stylesheet: string): string => String.raw`
  var css = document.createElement('link');
  css.rel = 'stylesheet'; css.href = ${JSON.stringify(stylesheet)};
  document.head.appendChild(css);
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text) e.textContent = text;
    return e;
  }
  var domainP = null;
  function domain() {
    domainP = domainP || fetch('/_airlock/version', { credentials: 'same-origin' }).then(function (r) { return r.json(); }).then(function (v) { return v.domain || '-'; });
    return domainP;
  }
`;
