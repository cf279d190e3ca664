import { createHash } from 'node:crypto';
import { FEATURES, widgetKept } from './matrix.js';
import { featuresJson, type ResolvedFeatures } from './resolve.js';
import { widgetsFor, type WidgetOverrides } from './widgets.js';

/** An inline element body and its CSP hash (base64 of sha256, CSP3 "hash-source"). */
export interface InlineCode {
  code: string;
  sha256Base64: string;
  /** The CSP source expression: `'sha256-…'`. */
  cspSource: string;
}

/**
 * The bytes a browser hashes for an inline `<script>`/`<style>` (CSP3 §8.4 + HTML "preprocessing
 * the input stream"): the element's text after CRLF/CR → LF and NUL → U+FFFD, UTF-8 encoded.
 * Hashing the raw source bytes instead would give a hash the browser never matches.
 */
export function cspHash(text: string): InlineCode {
  const normal = text.replace(/\r\n?/g, '\n').replaceAll('\u0000', '\uFFFD');
  const sha256Base64 = createHash('sha256').update(normal, 'utf8').digest('base64');
  return { code: text, sha256Base64, cspSource: `'sha256-${sha256Base64}'` };
}

/** `<` can never appear raw inside the script (no `</script>` breakout), whatever the JSON holds. */
function scriptSafeJson(json: string): string {
  return json
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * The injected flags script. Its bytes depend only on the resolved flags (featuresJson has a
 * fixed key order), so its CSP hash is known before any page is transformed.
 */
export function featuresScript(resolved: ResolvedFeatures): InlineCode {
  return cspHash(`window.__AIRLOCK_FEATURES__=${scriptSafeJson(featuresJson(resolved))};`);
}

function escapeAttr(v: string): string {
  return v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `<meta name="airlock-features" content="<the /_airlock/features JSON>">` */
export function featuresMeta(resolved: ResolvedFeatures): string {
  return `<meta name="airlock-features" content="${escapeAttr(featuresJson(resolved))}">`;
}

/** The selectors to hide for this feature set (features that are off), in matrix order. */
export function hiddenSelectors(resolved: ResolvedFeatures, overrides: WidgetOverrides = {}): string[] {
  const out: string[] = [];
  for (const f of FEATURES) {
    if (!widgetKept(resolved.features, f)) out.push(...widgetsFor(f, overrides).selectors);
  }
  return [...new Set(out)];
}

/** The injected `<style>` body hiding widgets of features that are off; null when nothing is off. */
export function hideStyle(resolved: ResolvedFeatures, overrides: WidgetOverrides = {}): InlineCode | null {
  const sel = hiddenSelectors(resolved, overrides);
  return sel.length === 0 ? null : cspHash(`${sel.join(',')}{display:none!important}`);
}

/**
 * The local search dialog, a same-origin script file served by src/serve while
 * local-search is on: no inline code, so the CSP needs nothing beyond 'self'.
 */
export const LOCAL_SEARCH_SCRIPT = '/_airlock/search.js';

/**
 * The assistant panel of local-assistant, a same-origin script file like the search dialog's,
 * served by src/serve while local-assistant is on. Its `data-widget` attribute carries the
 * selectors of the export's own assistant widget (widgets.ts, with the configured overrides): the
 * panel stays out of pages that hold that widget, which local-assistant keeps and answers.
 */
export const LOCAL_ASSISTANT_SCRIPT = '/_airlock/assistant.js';

function assistantTag(overrides: WidgetOverrides): string {
  const widget = widgetsFor('assistant', overrides).selectors.join(', ');
  return `<script src="${LOCAL_ASSISTANT_SCRIPT}" defer data-airlock="local-assistant" data-widget="${escapeAttr(widget)}"></script>`;
}

/** Everything injected at the start of `<head>`, in order: meta, flags script, hide style, local search, local assistant. */
export function headInjection(resolved: ResolvedFeatures, overrides: WidgetOverrides = {}): { html: string; script: InlineCode; style: InlineCode | null } {
  const script = featuresScript(resolved);
  const style = hideStyle(resolved, overrides);
  const html =
    featuresMeta(resolved) +
    `<script>${script.code}</script>` +
    (style ? `<style data-airlock="hide">${style.code}</style>` : '') +
    (resolved.features.localSearch ? `<script src="${LOCAL_SEARCH_SCRIPT}" defer data-airlock="local-search"></script>` : '') +
    (resolved.features.localAssistant ? assistantTag(overrides) : '');
  return { html, script, style };
}
