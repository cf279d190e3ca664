import { HTMLRewriter, type Element } from 'html-rewriter-wasm';
import { UsageError } from '../errors.js';
import { ANALYTICS_VENDORS, type AnalyticsVendor } from './analytics.js';
import { cspHash, headInjection, hiddenSelectors } from './inject.js';
import { FEATURES, widgetKept, type Deployment, type FeatureFlags } from './matrix.js';
import { addRemovalHandlers, screenSnippet, tally, type Tally } from './html-removal.js';
import { addWidgetRemoval } from './html-widgets.js';
import { addOfflineHandlers } from './html-offline.js';
import { addVendorMapping, vendorMapTag } from './html-vendor.js';
import { addOwnLinks } from './html-own-links.js';
import { RawTextBuffer } from './rawtext.js';
import { SPOOFED_FLAGS, needsScreening, scriptKind } from './script-kinds.js';
import { widgetsFor, type WidgetOverrides } from './widgets.js';

export interface TransformContext {
  features: FeatureFlags;
  deployment: Deployment;
  /** Per-feature hide selectors / removable scripts; a given list replaces the default. */
  hideSelectors?: WidgetOverrides;
  /**
   * New content for `<meta name="docs-api-base">` (the base URL the exported site calls for
   * search and assistant): the relay base when those are relayed through airlock ('/' = this
   * origin, as the service's export reads it; '' would make it fall back to the cloud default).
   * When neither search nor assistant is on and no value is given, it is set to '/' so that a
   * stray call stays on this origin (and gets the fail-fast 404) instead of leaving it.
   */
  assistantBase?: string;
  apiBaseMetaNames?: string[];
  vendors?: readonly AnalyticsVendor[];
  /** Vendoring: original reference → same-origin URL of the version's vendored copy (serve builds it from the manifest). */
  vendorMap?: Record<string, string>;
  /** The site's own published origins (`https://docs.example.com`): links to them become same-origin links. */
  ownOrigins?: string[];
}

export interface TransformResult {
  html: Buffer;
  /** CSP hash sources (`'sha256-…'`) of every executable inline script kept, ours first. */
  scriptHashes: string[];
  /** CSP hash sources of every inline `<style>` kept, ours first. */
  styleHashes: string[];
  removed: Tally;
}

export async function transformHtml(html: string | Buffer, ctx: TransformContext, pagePath?: string): Promise<Buffer> {
  return (await transformHtmlDetailed(html, ctx, pagePath)).html;
}

/**
 * Streaming rewrite of one page (lol-html via html-rewriter-wasm); pure: bytes in, bytes out.
 * `pagePath` (the page's path inside the site) matters only to vendoring's relative references.
 */
export async function transformHtmlDetailed(html: string | Buffer, ctx: TransformContext, pagePath?: string): Promise<TransformResult> {
  const resolved = { deployment: ctx.deployment, features: ctx.features };
  const inj = headInjection(resolved, ctx.hideSelectors);
  const headHtml = inj.html + vendorMapTag(ctx.vendorMap);
  const scriptHashes = new Set<string>([inj.script.cspSource]);
  const styleHashes = new Set<string>(inj.style ? [inj.style.cspSource] : []);
  const removed: Tally = {};
  const out: Buffer[] = [];
  const rw = new HTMLRewriter((chunk) => out.push(Buffer.from(chunk)));

  // At the very start of <head>, so the flags exist before any of the site's scripts run. (A
  // leading <meta charset> moves back by the injection's length; the server's Content-Type
  // carries the charset, which takes precedence over the meta (HTML "encoding sniffing").) A head
  // the page leaves implied (`<!doctype html><title>…`, legal HTML) starts at its first element
  // that belongs in a head (or its first svg or math, whose foreign content must not receive it):
  // the injection goes just before it.
  let injected = false;
  const inject = (el: Element) => {
    if (injected) return;
    injected = true;
    if (el.tagName === 'head' || el.tagName === 'body') el.prepend(headHtml, { html: true });
    else el.before(headHtml, { html: true });
  };
  rw.on('head, body, title, meta, link, script, style, base, noscript, template, svg, math', { element: inject });

  const analyticsOff = !ctx.features.analytics;
  const offScripts = FEATURES.filter((f) => !widgetKept(ctx.features, f)).flatMap((f) => widgetsFor(f, ctx.hideSelectors).scripts);
  const vendors = ctx.vendors ?? ANALYTICS_VENDORS;
  const raw = new RawTextBuffer();
  addRemovalHandlers(rw, { analyticsOff, offScripts, vendors, raw, removed });
  // Own-address URLs first: the air-gapped rules then see a same-origin frame or refresh.
  if (ctx.ownOrigins !== undefined && ctx.ownOrigins.length > 0) addOwnLinks(rw, ctx.ownOrigins, removed);
  if (ctx.deployment === 'air-gapped') addOfflineHandlers(rw, removed);
  if (ctx.vendorMap) addVendorMapping(rw, ctx.vendorMap, removed, pagePath);
  // Widgets of features that are off leave the page (the hide style stays for run-time additions).
  addWidgetRemoval(rw, hiddenSelectors(resolved, ctx.hideSelectors), removed);

  // Inline scripts: kept ones are hashed for the page's CSP; analytics snippets are dropped by
  // the removal rules' screen; scripts that try to set airlock's flags are dropped (best effort:
  // the export's own bundles could still write that global — the CSP is the real boundary).
  const scriptDecision = (type: string | null) => (text: string) => {
    if (SPOOFED_FLAGS.test(text)) return tally(removed, 'spoofed-flags');
    if (analyticsOff && !screenSnippet(text, type, vendors, removed)) return false;
    if (text !== '' && scriptKind(type) === 'executable') scriptHashes.add(cspHash(text).cspSource);
    return true;
  };
  // Untyped scripts (nearly all of them) get a text-only handler: no element callback needed.
  const untyped = { decide: scriptDecision(null), screen: needsScreening };
  rw.on('script:not([src]):not([type])', { text: (t) => raw.text(t, untyped) });
  rw.on('script[type]:not([src])', {
    element: (el) => {
      const type = el.getAttribute('type');
      // JSON blocks never run: nothing to screen, nothing to hash
      if (scriptKind(type) === 'data') return;
      if (!analyticsOff) return void raw.begin(scriptDecision(type), needsScreening);
      // Analytics off: a dropped bootstrap (OneTrust's `function OptanonWrapper`) or an
      // empty script leaves no empty <script> behind: the tags go now and are written back only
      // around text that is kept. Typed inline scripts only: they already have an element handler.
      const open = startTag(el);
      el.removeAndKeepContent();
      el.onEndTag(() => raw.cancel());
      raw.begin(scriptDecision(type), true, (text) => `${open}${text}</script>`);
    },
    text: (t) => raw.text(t),
  });
  rw.on('style', {
    element: () => raw.begin((text) => (text !== '' && styleHashes.add(cspHash(text).cspSource), true), false),
    text: (t) => raw.text(t),
  });
  rw.on('meta[name="airlock-features" i]', { element: (el) => void el.remove() });
  const base = apiBase(ctx);
  if (base !== undefined) {
    for (const name of ctx.apiBaseMetaNames ?? ['docs-api-base']) {
      rw.on(`meta[name="${checkMetaName(name)}" i]`, { element: (el) => void el.setAttribute('content', base) });
    }
  }
  // The server's header CSP is the page's policy; a second one from the export would be
  // enforced too (policies intersect) and would block the injected flags script.
  rw.on('meta[http-equiv]', {
    element: (el) => {
      if ((el.getAttribute('http-equiv') ?? '').trim().toLowerCase().startsWith('content-security-policy')) el.remove();
    },
  });
  rw.onDocument({ end: (end) => void (injected || end.append(headHtml, { html: true })) });

  try {
    await rw.write(typeof html === 'string' ? Buffer.from(html, 'utf8') : html);
    await rw.end();
  } finally {
    rw.free();
  }
  return { html: Buffer.concat(out), scriptHashes: [...scriptHashes], styleHashes: [...styleHashes], removed };
}

/** An element's start tag, written back as it was (lol-html hands attribute values over as written, entities included). */
function startTag(el: Element): string {
  let tag = `<${el.tagName}`;
  for (const [name, value] of el.attributes) tag += value === '' ? ` ${name}` : ` ${name}="${value.replace(/"/g, '&quot;')}"`;
  return tag + '>';
}

// Meta names go into a selector: only plain name characters, so configuration cannot change it.
function checkMetaName(name: string): string {
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(name)) {
    throw new UsageError(`invalid meta name ${JSON.stringify(name)}: letters, digits, _ . : - only`, { subject: name }, 'AIRLOCK_BAD_META_NAME');
  }
  return name;
}

/** How the service's export spells "this origin" in docs-api-base (see its search/assistant chunks). */
export const SAME_ORIGIN_BASE = '/';

function apiBase(ctx: TransformContext): string | undefined {
  if (ctx.assistantBase !== undefined) return ctx.assistantBase;
  return ctx.features.search || ctx.features.assistant ? undefined : SAME_ORIGIN_BASE;
}
