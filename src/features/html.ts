import { HTMLRewriter, type Element } from 'html-rewriter-wasm';
import { ANALYTICS_VENDORS, type AnalyticsVendor } from './analytics.js';
import { cspHash, headInjection } from './inject.js';
import { FEATURES, FEATURE_KEY, type Deployment, type FeatureFlags } from './matrix.js';
import { addRemovalHandlers, screenSnippet, tally, type Tally } from './html-removal.js';
import { RawTextBuffer } from './rawtext.js';
import { SPOOFED_FLAGS, scriptKind } from './script-kinds.js';
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
}

export interface TransformResult {
  html: Buffer;
  /** CSP hash sources (`'sha256-…'`) of every executable inline script kept, ours first. */
  scriptHashes: string[];
  /** CSP hash sources of every inline `<style>` kept, ours first. */
  styleHashes: string[];
  removed: Tally;
}

export async function transformHtml(html: string | Buffer, ctx: TransformContext): Promise<Buffer> {
  return (await transformHtmlDetailed(html, ctx)).html;
}

/** Streaming rewrite of one page (lol-html via html-rewriter-wasm); pure: bytes in, bytes out. */
export async function transformHtmlDetailed(html: string | Buffer, ctx: TransformContext): Promise<TransformResult> {
  const resolved = { deployment: ctx.deployment, features: ctx.features };
  const inj = headInjection(resolved, ctx.hideSelectors);
  const scriptHashes = new Set<string>([inj.script.cspSource]);
  const styleHashes = new Set<string>(inj.style ? [inj.style.cspSource] : []);
  const removed: Tally = {};
  const out: Buffer[] = [];
  const rw = new HTMLRewriter((chunk) => out.push(Buffer.from(chunk)));

  let injected = false;
  const inject = (el: Element, where: 'before' | 'after' | 'prepend') => {
    if (injected) return;
    injected = true;
    el[where](inj.html, { html: true });
  };
  // At the very start of <head> so the flags exist before any of the site's scripts run, but
  // after a leading <meta charset>, which must stay within the first 1024 bytes (HTML §4.2.5.4).
  let headChildSeen = false;
  rw.on('head', { element: (el) => el.onEndTag((end) => { if (!injected) { injected = true; end.before(inj.html, { html: true }); } }) });
  rw.on('head > *', {
    element: (el) => {
      if (headChildSeen) return;
      headChildSeen = true;
      inject(el, el.tagName === 'meta' && el.hasAttribute('charset') ? 'after' : 'before');
    },
  });
  rw.on('body', { element: (el) => inject(el, 'prepend') });

  const analyticsOff = !ctx.features.analytics;
  const offScripts = FEATURES.filter((f) => !ctx.features[FEATURE_KEY[f]]).flatMap((f) => widgetsFor(f, ctx.hideSelectors).scripts);
  const vendors = ctx.vendors ?? ANALYTICS_VENDORS;
  const raw = new RawTextBuffer();
  addRemovalHandlers(rw, { analyticsOff, offScripts, vendors, raw, removed });

  // Inline scripts: kept ones are hashed for the page's CSP; analytics snippets are dropped by
  // the removal rules' screen; scripts that try to set airlock's flags are always dropped.
  rw.on('script:not([src])', {
    element: (el) =>
      raw.begin(el, (text, attrs) => {
        const type = attrs.find(([n]) => n === 'type')?.[1] ?? null;
        if (SPOOFED_FLAGS.test(text)) return tally(removed, 'spoofed-flags');
        if (analyticsOff && !screenSnippet(text, type, vendors, removed)) return false;
        if (scriptKind(type) === 'executable') scriptHashes.add(cspHash(text).cspSource);
        return true;
      }),
    text: (t) => raw.text(t),
  });
  rw.on('style', {
    element: (el) => raw.begin(el, (text) => (styleHashes.add(cspHash(text).cspSource), true)),
    text: (t) => raw.text(t),
  });
  rw.on('meta[name]', {
    element: (el) => {
      const name = (el.getAttribute('name') ?? '').trim().toLowerCase();
      if (name === 'airlock-features') el.remove();
      else if ((ctx.apiBaseMetaNames ?? ['docs-api-base']).includes(name)) {
        const base = apiBase(ctx);
        if (base !== undefined) el.setAttribute('content', base);
      }
    },
  });
  // The server's header CSP is the page's policy; a second one from the export would be
  // enforced too (policies intersect) and would block the injected flags script.
  rw.on('meta[http-equiv]', {
    element: (el) => {
      if ((el.getAttribute('http-equiv') ?? '').trim().toLowerCase().startsWith('content-security-policy')) el.remove();
    },
  });
  rw.onDocument({
    end: (end) => {
      raw.end(end);
      if (!injected) end.append(inj.html, { html: true });
    },
  });

  try {
    await rw.write(typeof html === 'string' ? Buffer.from(html, 'utf8') : html);
    await rw.end();
  } finally {
    rw.free();
  }
  return { html: Buffer.concat(out), scriptHashes: [...scriptHashes], styleHashes: [...styleHashes], removed };
}

/** How the service's export spells "this origin" in docs-api-base (see its search/assistant chunks). */
export const SAME_ORIGIN_BASE = '/';

function apiBase(ctx: TransformContext): string | undefined {
  if (ctx.assistantBase !== undefined) return ctx.assistantBase;
  return ctx.features.search || ctx.features.assistant ? undefined : SAME_ORIGIN_BASE;
}

