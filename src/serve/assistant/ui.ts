import { Hono } from 'hono';
import type { AppEnv } from '../app.js';
import { clientBasics } from '../client-basics.js';
import { LOCAL_ASSISTANT_SCRIPT } from '../../features/index.js';
import { MARKDOWN } from './markdown.js';
import { STREAM } from './stream.js';
import { STYLE } from './style.js';

/**
 * The in-page assistant panel of local-assistant, for exports without an assistant widget of their
 * own: a same-origin script (injected by src/features as `<script src="/_airlock/assistant.js"
 * defer>`) and its stylesheet, like the local search dialog. It adds an "Ask" button (beside the
 * search button when local search is on) that opens a native modal `<dialog>` (focus kept inside,
 * Escape closes): a question field (Enter sends, Shift+Enter a new line) and the conversation, an
 * `aria-live` log. The question goes to `POST /discovery/v2/assistant/{domain}/message` on this
 * origin only (the domain from `/_airlock/version`); the streamed answer is shown as it arrives,
 * rendered from Markdown with DOM nodes only (markdown.ts), then its sources as links of this
 * origin. Follow-ups continue the thread the answer's `finish` part names.
 *
 * The rule about the export's own widget: the script does nothing on a page that holds the
 * export's assistant widget (the selectors in its `data-widget` attribute, widgets.ts), since
 * local-assistant keeps that widget and answers it; a widget the page's code adds, before `load`
 * or any time after, takes the panel away again. One assistant per page, never two.
 */
export const LOCAL_ASSISTANT_STYLE = '/_airlock/assistant.css';

const SCRIPT = String.raw`(function () {
  'use strict';
  if (window.__airlockLocalAssistant) return;
  window.__airlockLocalAssistant = true;
  var me = document.currentScript, widget = (me && me.getAttribute('data-widget')) || '';
  function ownWidget() {
    try { return widget !== '' && document.querySelector(widget) !== null; } catch (e) { return false; }
  }
  if (ownWidget()) return;
${MARKDOWN}
${STREAM}
  // getRandomValues, not randomUUID: a server in a closed network is often plain http (no secure context).
  function random() {
    var a = new Uint8Array(16);
    crypto.getRandomValues(a);
    return Array.prototype.map.call(a, function (b) { return (b + 256).toString(16).slice(1); }).join('');
  }
  var fp;
  try { fp = sessionStorage.getItem('airlock-assistant-fp') || random(); sessionStorage.setItem('airlock-assistant-fp', fp); } catch (e) { fp = fp || random(); }
${clientBasics(LOCAL_ASSISTANT_STYLE)}
  var trigger = el('button', { type: 'button', 'class': 'airlock-assistant-trigger', 'data-airlock-feature': 'local-assistant', 'aria-haspopup': 'dialog' }, 'Ask');
  var dialog = el('dialog', { 'class': 'airlock-assistant', 'data-airlock-feature': 'local-assistant', 'aria-labelledby': 'airlock-assistant-title' });
  var head = el('div', { 'class': 'airlock-assistant-head' });
  head.appendChild(el('h2', { id: 'airlock-assistant-title' }, 'Ask the documentation'));
  var closer = el('button', { type: 'button', 'class': 'airlock-assistant-close', 'aria-label': 'Close' }, '×');
  head.appendChild(closer);
  var log = el('div', { 'class': 'airlock-assistant-log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
  var form = el('form', { method: 'dialog' });
  var input = el('textarea', { rows: '2', 'aria-label': 'Your question', placeholder: 'Ask a question about this documentation', maxlength: '2000' });
  var send = el('button', { type: 'submit' }, 'Send');
  form.appendChild(input); form.appendChild(send);
  var status = el('p', { 'class': 'airlock-assistant-status', role: 'status' });
  var help = el('p', { 'class': 'airlock-assistant-help' }, 'Enter to send, Shift+Enter for a new line, Esc to close. Answered by this server from these pages; nothing leaves the network.');
  dialog.appendChild(head); dialog.appendChild(log); dialog.appendChild(form); dialog.appendChild(status); dialog.appendChild(help);

  var threadId = null, busy = false, seq = 0;
  function request(q) {
    var body = { fp: fp, messages: [{ id: 'msg_' + random(), role: 'user', parts: [{ type: 'text', text: q }] }], currentPath: location.pathname.slice(0, 200) };
    if (threadId) body.threadId = threadId;
    var lang = document.documentElement.getAttribute('lang') || '';
    if (/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$/.test(lang)) body.filter = { language: lang };
    return body;
  }
  function ask(q, attempt, turn) {
    if (!turn) {
      turn = el('div', { 'class': 'airlock-assistant-turn' });
      turn.appendChild(el('p', { 'class': 'airlock-assistant-question' }, q));
      log.appendChild(turn);
    }
    var answer = el('div', { 'class': 'airlock-assistant-answer', 'aria-busy': 'true' });
    var text = '', sources = null, seen = {};
    busy = true; send.disabled = true; status.textContent = 'Thinking…';
    function fail(message) {
      answer.appendChild(el('p', { 'class': 'airlock-assistant-error' }, message));
      if (!answer.parentNode) turn.appendChild(answer);
    }
    // The answer so far is drawn at most every 100 ms (and once more at its end), not at each of its
    // words: redrawing it whole per word would cost the square of its length and freeze the page.
    var timer = null;
    function paint() {
      if (timer) { clearTimeout(timer); timer = null; }
      var kept = answer.querySelector('.airlock-assistant-error');
      answer.textContent = '';
      answer.appendChild(markdown(text));
      if (kept) answer.appendChild(kept);
      log.scrollTop = log.scrollHeight;
    }
    function part(p) {
      if (p.type === 'text-delta' && typeof p.delta === 'string') {
        text += p.delta;
        if (!timer) timer = setTimeout(paint, 100);
        return;
      } else if (p.type === 'source-url') {
        var href = sameOrigin(p.url);
        if (!href || seen[href]) return;
        seen[href] = true;
        if (!sources) { sources = el('ul', { 'class': 'airlock-assistant-sources', 'aria-label': 'Sources' }); turn.appendChild(sources); }
        var li = el('li'), a = el('a', { href: href }, typeof p.title === 'string' && p.title ? p.title : p.url);
        li.appendChild(a); sources.appendChild(li);
      } else if (p.type === 'error') fail('The answer broke off: ' + String(p.errorText || 'unknown error').slice(0, 300));
      else if (p.type === 'finish' && p.messageMetadata && typeof p.messageMetadata.threadId === 'string') threadId = p.messageMetadata.threadId;
      log.scrollTop = log.scrollHeight;
    }
    var my = ++seq;
    return domain().then(function (d) {
      return fetch('/discovery/v2/assistant/' + encodeURIComponent(d) + '/message', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(request(q)), credentials: 'same-origin' });
    }).then(function (res) {
      if (res.status === 503 && attempt < 10 && Number(res.headers.get('retry-after')) <= 5) {
        // The site's search index is being prepared (a short Retry-After): asked again by itself.
        status.textContent = 'The assistant is getting these pages ready…';
        return new Promise(function (r) { setTimeout(r, Math.max(1, Number(res.headers.get('retry-after'))) * 1000); }).then(function () { return ask(q, attempt + 1, turn); });
      }
      turn.appendChild(answer);
      if (!res.ok || !res.body) return res.json().catch(function () { return null; }).then(function (b) { fail(refusal(res, b)); });
      return readParts(res, part);
    }).catch(function () { fail('The assistant could not be reached.'); }).then(function () {
      if (timer) paint();
      if (my !== seq) return;
      answer.setAttribute('aria-busy', 'false');
      busy = false; send.disabled = false; status.textContent = '';
    });
  }
  function submit() {
    var q = input.value.trim();
    if (!q || busy) return;
    input.value = '';
    ask(q.slice(0, 2000), 0, null);
  }
  form.addEventListener('submit', function (e) { e.preventDefault(); submit(); });
  input.addEventListener('keydown', function (e) {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); submit(); }
  });
  closer.addEventListener('click', function () { dialog.close(); });
  dialog.addEventListener('click', function (e) { if (e.target === dialog) dialog.close(); });
  dialog.addEventListener('close', function () { trigger.focus({ preventScroll: true }); });
  trigger.addEventListener('click', function () { if (!dialog.open) dialog.showModal(); input.focus(); });
  // Beside the local search button when there is one (its script runs first: injected first).
  function place() {
    var s = document.querySelector('.airlock-search-trigger');
    if (s && s.getBoundingClientRect().width) trigger.style.right = Math.round(window.innerWidth - s.getBoundingClientRect().left + 8) + 'px';
  }
  function mount() { document.body.appendChild(trigger); document.body.appendChild(dialog); place(); }
  if (document.body) mount(); else document.addEventListener('DOMContentLoaded', mount);
  window.addEventListener('resize', place);
  // The page's own widget may arrive later (widgets often load lazily): looked for after load and
  // after the page changes (at most every 500 ms); once it is there, the panel goes.
  var watch = null, pending = false;
  function withdraw() {
    pending = false;
    if (!ownWidget()) return;
    if (watch) watch.disconnect();
    if (dialog.open) dialog.close();
    trigger.remove(); dialog.remove();
  }
  window.addEventListener('load', function () {
    if (ownWidget()) return withdraw();
    place();
    watch = new MutationObserver(function () { if (!pending) { pending = true; setTimeout(withdraw, 500); } });
    watch.observe(document.body, { childList: true, subtree: true });
  });
})();
`;

export function assistantAssets(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(LOCAL_ASSISTANT_SCRIPT, (c) => c.body(SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));
  app.get(LOCAL_ASSISTANT_STYLE, (c) => c.body(STYLE, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  return app;
}
