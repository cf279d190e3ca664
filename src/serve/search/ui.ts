import { Hono } from 'hono';
import type { AppEnv } from '../app.js';
import { clientBasics } from '../client-basics.js';
import { LOCAL_SEARCH_SCRIPT } from '../../features/index.js';

/**
 * The in-page search dialog of local search: a same-origin script (injected by
 * src/features as `<script src="/_airlock/search.js" defer>`) and its stylesheet. It adds a
 * "Search" button and opens a native modal `<dialog>` (focus kept inside, Escape closes) on the
 * button, on `/` or Ctrl/Cmd+K, and when the export's own search box (if any is left) is
 * focused. Results: a listbox with arrow-key navigation; Enter or click opens `page#anchor`.
 * Snippets arrive as escaped HTML with `<mark>`; they are parsed inertly (DOMParser) and only
 * text and `<mark>` are copied into the page. It calls `POST /_airlock/search/{domain}` on this
 * origin only (the domain from `/_airlock/version`), and retries while the index is being built.
 */
export const LOCAL_SEARCH_STYLE = '/_airlock/search.css';

const SCRIPT = String.raw`(function () {
  'use strict';
  if (window.__airlockLocalSearch) return;
  window.__airlockLocalSearch = true;
  // the reader's language (the page's lang, when it is a tag) and page: their copies of a page first
  function request(q) {
    var body = { query: q.slice(0, 500), pageSize: 10, page: location.pathname.slice(0, 2000) };
    var lang = document.documentElement.getAttribute('lang') || '';
    if (/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$/.test(lang)) body.filter = { language: lang };
    return body;
  }
${clientBasics(LOCAL_SEARCH_STYLE)}
  var trigger = el('button', { type: 'button', 'class': 'airlock-search-trigger', 'data-airlock-feature': 'local-search', 'aria-haspopup': 'dialog', 'aria-keyshortcuts': '/ Control+K Meta+K' });
  trigger.appendChild(document.createTextNode('Search '));
  trigger.appendChild(el('kbd', {}, '/'));
  var dialog = el('dialog', { 'class': 'airlock-search', 'data-airlock-feature': 'local-search', 'aria-label': 'Search the documentation' });
  var form = el('form', { role: 'search', method: 'dialog' });
  var input = el('input', { type: 'search', 'aria-label': 'Search the documentation', placeholder: 'Search the documentation', autocomplete: 'off', spellcheck: 'false',
    role: 'combobox', 'aria-expanded': 'false', 'aria-controls': 'airlock-search-results', 'aria-autocomplete': 'list' });
  var status = el('p', { 'class': 'airlock-search-status', role: 'status', 'aria-live': 'polite' });
  var list = el('ul', { id: 'airlock-search-results', role: 'listbox', 'aria-label': 'Search results' });
  var help = el('p', { 'class': 'airlock-search-help' }, '↑ ↓ to choose, Enter to open, Esc to close. Answered by this server; nothing leaves the network.');
  form.appendChild(input);
  dialog.appendChild(form); dialog.appendChild(status); dialog.appendChild(list); dialog.appendChild(help);

  var hits = [], active = -1, timer = 0, ctrl = null, seq = 0;
  function setActive(i) {
    var items = list.children;
    if (active >= 0 && items[active]) items[active].setAttribute('aria-selected', 'false');
    active = i;
    if (i >= 0 && items[i]) {
      items[i].setAttribute('aria-selected', 'true');
      input.setAttribute('aria-activedescendant', items[i].id);
      items[i].scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  }
  // Only text and <mark> of the server's snippet reach the page (parsed inertly, never innerHTML).
  function snippet(html) {
    var out = document.createDocumentFragment();
    var body = new DOMParser().parseFromString('<body>' + html, 'text/html').body;
    body.childNodes.forEach(function (n) {
      if (n.nodeType === 3) out.appendChild(document.createTextNode(n.nodeValue));
      else if (n.nodeType === 1 && n.nodeName === 'MARK') out.appendChild(el('mark', {}, n.textContent));
      else out.appendChild(document.createTextNode(n.textContent || ''));
    });
    return out;
  }
  function render(results) {
    hits = results; list.textContent = ''; active = -1;
    results.forEach(function (h, i) {
      var li = el('li', { id: 'airlock-search-hit-' + i, role: 'option', 'aria-selected': 'false' });
      var a = el('a', { href: h.path, tabindex: '-1' });
      var meta = h.metadata || {};
      a.appendChild(el('span', { 'class': 'airlock-search-title' }, meta.title || h.path));
      if (meta.heading && meta.heading !== meta.title) a.appendChild(el('span', { 'class': 'airlock-search-heading' }, meta.heading));
      var p = el('span', { 'class': 'airlock-search-snippet' });
      p.appendChild(snippet(String(h.content || '')));
      a.appendChild(p);
      li.appendChild(a);
      li.addEventListener('mousemove', function () { if (active !== i) setActive(i); });
      a.addEventListener('click', function () { dialog.close(); });
      list.appendChild(li);
    });
    input.setAttribute('aria-expanded', results.length ? 'true' : 'false');
    if (results.length) setActive(0);
  }
  function search(q, attempt) {
    var my = ++seq;
    if (ctrl) ctrl.abort();
    ctrl = typeof AbortController === 'function' ? new AbortController() : null;
    if (!q) { render([]); status.textContent = ''; return; }
    status.textContent = 'Searching…';
    domain().then(function (d) {
      return fetch('/_airlock/search/' + encodeURIComponent(d), { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request(q)), signal: ctrl ? ctrl.signal : undefined, credentials: 'same-origin' });
    }).then(function (res) {
      if (my !== seq) return;
      if (res.status === 503 && attempt < 10) {
        status.textContent = 'The search index is being prepared…';
        var wait = Math.min(5, Number(res.headers.get('retry-after')) || 1) * 1000;
        setTimeout(function () { if (my === seq) search(q, attempt + 1); }, wait);
        return;
      }
      if (!res.ok) { status.textContent = 'Search is unavailable (HTTP ' + res.status + ').'; render([]); return; }
      return res.json().then(function (results) {
        if (my !== seq) return;
        render(Array.isArray(results) ? results : []);
        status.textContent = results.length ? results.length + (results.length === 1 ? ' result' : ' results') : 'No results for “' + q + '”.';
      });
    }).catch(function (err) { if (my === seq && (!err || err.name !== 'AbortError')) status.textContent = 'Search failed.'; });
  }
  function open(q) {
    if (!dialog.open) dialog.showModal();
    if (typeof q === 'string' && q) input.value = q;
    input.focus(); input.select();
    if (input.value.trim()) search(input.value.trim(), 0);
  }
  input.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(function () { search(input.value.trim(), 0); }, 120);
  });
  input.addEventListener('keydown', function (e) {
    var n = list.children.length;
    if (e.key === 'ArrowDown' && n) { e.preventDefault(); setActive((active + 1) % n); }
    else if (e.key === 'ArrowUp' && n) { e.preventDefault(); setActive((active - 1 + n) % n); }
    else if (e.key === 'Enter') {
      e.preventDefault();
      if (active >= 0 && hits[active]) { dialog.close(); location.assign(hits[active].path); }
    }
  });
  form.addEventListener('submit', function (e) { e.preventDefault(); });
  dialog.addEventListener('click', function (e) { if (e.target === dialog) dialog.close(); });
  dialog.addEventListener('close', function () { trigger.focus({ preventScroll: true }); });
  trigger.addEventListener('click', function () { open(); });
  document.addEventListener('keydown', function (e) {
    var t = e.target, editing = t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
    if ((e.key === 'k' || e.key === 'K') && (e.ctrlKey || e.metaKey)) { e.preventDefault(); open(); }
    else if (e.key === '/' && !editing && !dialog.open) { e.preventDefault(); open(); }
  });
  // The export's own search box, if one is left in the page: focusing it opens the dialog.
  document.addEventListener('focusin', function (e) {
    var t = e.target;
    if (!t || dialog.contains(t) || !t.matches) return;
    if (t.matches('input[type="search"], [role="search"] input, input[name="q"], .DocSearch-Button, #search-bar-entry')) { if (t.blur) t.blur(); open(t.value || ''); }
  });
  function mount() { document.body.appendChild(trigger); document.body.appendChild(dialog); }
  if (document.body) mount(); else document.addEventListener('DOMContentLoaded', mount);
})();
`;

const STYLE = `.airlock-search-trigger{position:fixed;right:1rem;bottom:1rem;z-index:2147483000;font:14px/1.2 system-ui,sans-serif;padding:.5rem .75rem;border-radius:.5rem;border:1px solid #8886;background:#fff;color:#222;cursor:pointer;box-shadow:0 2px 8px #0002}
.airlock-search-trigger kbd{font:12px ui-monospace,monospace;border:1px solid #8888;border-radius:3px;padding:0 .3em;margin-left:.3em}
dialog.airlock-search{width:min(42rem,92vw);max-height:80vh;padding:0;border:1px solid #8886;border-radius:.75rem;font:15px/1.4 system-ui,sans-serif;color:#222;background:#fff;box-shadow:0 10px 40px #0004}
dialog.airlock-search::backdrop{background:#0006}
dialog.airlock-search form{margin:0;padding:.75rem;border-bottom:1px solid #8884}
dialog.airlock-search input{width:100%;box-sizing:border-box;font:inherit;font-size:17px;padding:.5rem .6rem;border:1px solid #8888;border-radius:.4rem}
dialog.airlock-search ul{list-style:none;margin:0;padding:.25rem;overflow:auto;max-height:55vh}
dialog.airlock-search li a{display:block;padding:.5rem .6rem;border-radius:.4rem;color:inherit;text-decoration:none}
dialog.airlock-search li[aria-selected="true"] a{background:#2563eb1a;outline:2px solid #2563eb}
.airlock-search-title{display:block;font-weight:600}
.airlock-search-heading{display:block;font-size:13px;color:#555}
.airlock-search-snippet{display:block;font-size:13px;color:#444}
.airlock-search-snippet mark{background:#fde68a;color:inherit}
.airlock-search-status,.airlock-search-help{margin:0;padding:.4rem .9rem;font-size:12px;color:#555}
@media (prefers-color-scheme:dark){.airlock-search-trigger,dialog.airlock-search{background:#1e1e1e;color:#eee}.airlock-search-heading,.airlock-search-snippet,.airlock-search-status,.airlock-search-help{color:#bbb}}
`;

export function searchAssets(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(LOCAL_SEARCH_SCRIPT, (c) => c.body(SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));
  app.get(LOCAL_SEARCH_STYLE, (c) => c.body(STYLE, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  return app;
}
