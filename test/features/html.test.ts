import { describe, expect, it } from 'vitest';
import {
  ANALYTICS_VENDORS,
  DEFAULT_WIDGETS,
  cspFor,
  featuresDocument,
  featuresScript,
  hiddenSelectors,
  resolveFeatures,
  transformHtml,
  transformHtmlDetailed,
  type ResolvedFeatures,
} from '../../src/features/index.js';
import { fixturePages, inlineScripts, metaFlags, scriptFlags, sha256Source } from './helpers.js';
import { VENDOR_SAMPLES, nextPage } from './vendor-samples.js';

const AIR = resolveFeatures({ deployment: 'air-gapped' });
const ctx = (r: ResolvedFeatures, more = {}) => ({ features: r.features, deployment: r.deployment, ...more });
const VENDOR_HOSTS = ANALYTICS_VENDORS.flatMap((v) => v.hosts);

describe('transformHtml on the committed fixture site', () => {
  const pages = fixturePages();

  it('has pages to work on', () => {
    expect(pages.length).toBeGreaterThanOrEqual(10);
  });

  it('air-gapped: no analytics host, tag or bootstrap is left in any page, and the page content is intact', async () => {
    for (const [path, bytes] of pages) {
      const out = (await transformHtml(bytes, ctx(AIR))).toString('utf8');
      for (const h of [...VENDOR_HOSTS, 'gtag(', 'posthog.init', 'dataLayer']) expect(out, `${h} in ${path}`).not.toContain(h);
      // everything else survives: the site's own scripts, the Next data block, the closing tags
      expect(out).toContain('/_next/static/chunks/main-');
      expect(out).toContain('id="__NEXT_DATA__"');
      expect(out).toContain('</html>');
      expect(out).toContain('<meta name="docs-api-base" content="/">');
      expect(metaFlags(out)).toEqual(featuresDocument(AIR));
      expect(scriptFlags(out)).toEqual(featuresDocument(AIR));
    }
  });

  it('client-hosted with analytics on: the vendor tags stay; the assistant base is rewritten to the relay base', async () => {
    const r = resolveFeatures({ deployment: 'client-hosted', enable: ['analytics', 'assistant'] });
    const [, bytes] = pages.find(([p]) => p === 'index.html')!;
    const res = await transformHtmlDetailed(bytes, ctx(r, { assistantBase: '/' }));
    const out = res.html.toString();
    expect(out).toContain('https://www.googletagmanager.com/gtag/js');
    expect(out).toContain("posthog.init('phc_fixture1'");
    expect(out).toContain('<meta name="docs-api-base" content="/">');
    // nothing of analytics or the assistant is removed; search is off: its widget and script go
    expect(res.removed).toEqual({ widget: 1, 'feature-script': 1 });
    // the assistant is on: its widget is not hidden; search is off: it is
    const style = /<style data-airlock="hide">([^<]*)<\/style>/.exec(out)![1]!;
    expect(style).toContain('#search-bar');
    expect(style).not.toContain('#assistant-widget');
  });

  it('cloud without a relay base leaves docs-api-base alone and hides nothing', async () => {
    const r = resolveFeatures({ deployment: 'cloud' });
    const [, bytes] = pages.find(([p]) => p === 'index.html')!;
    const out = (await transformHtml(bytes, ctx(r))).toString();
    expect(out).toContain('<meta name="docs-api-base" content="https://api.docservice.example">');
    expect(out).not.toContain('data-airlock="hide"');
  });

  it('the flags go first in <head>', async () => {
    const [, bytes] = pages.find(([p]) => p === 'index.html')!;
    const out = (await transformHtml(bytes, ctx(AIR))).toString();
    expect(out).toMatch(/<head><meta name="airlock-features" [^>]*><script>window\.__AIRLOCK_FEATURES__=/);
  });

  it('every executable inline script kept in a page has its hash in the page CSP, the flags script included', async () => {
    for (const r of [AIR, resolveFeatures({ deployment: 'cloud' })]) {
      for (const [path, bytes] of pages) {
        const res = await transformHtmlDetailed(bytes, ctx(r));
        const csp = cspFor(r, { scriptHashes: res.scriptHashes });
        // emptied snippets stay as inert <script></script> shells: a browser neither runs nor CSP-checks them
        const scripts = inlineScripts(res.html.toString()).filter((s) => !/type="application\/(ld\+)?json"/.test(s.attrs) && s.text !== '');
        expect(scripts.length).toBeGreaterThan(0);
        for (const s of scripts) expect(csp, `${path}: ${s.text.slice(0, 40)}`).toContain(sha256Source(s.text));
        expect(csp).toContain(sha256Source(featuresScript(r).code));
        expect(csp).not.toContain("'unsafe-inline' 'sha");
      }
    }
  });

  it('air-gapped: the widgets and their scripts are removed from the HTML, not only hidden', async () => {
    for (const [path, bytes] of pages) {
      const res = await transformHtmlDetailed(bytes, ctx(AIR));
      const out = res.html.toString();
      expect(bytes.toString(), path).toContain('id="search-bar"');
      for (const gone of [
        'id="search-bar"',
        'id="assistant-widget"',
        'data-search-results',
        'data-assistant-input',
        '/_next/static/chunks/search-',
        '/_next/static/chunks/assistant-',
      ]) {
        expect(out, `${gone} in ${path}`).not.toContain(gone);
      }
      expect(res.removed.widget, path).toBeGreaterThanOrEqual(2);
      expect(res.removed['feature-script'], path).toBe(2);
      expect(out).toContain('/_next/static/chunks/main-'); // the site's own code stays
      expect(out).toContain('<main>');
    }
  });

  it('a feature that is on keeps its widget and script; the ones that are off go', async () => {
    const [, bytes] = pages.find(([p]) => p === 'index.html')!;
    const r = resolveFeatures({ deployment: 'client-hosted', enable: ['assistant'] });
    const out = (await transformHtml(bytes, ctx(r, { assistantBase: '/' }))).toString();
    expect(out).toContain('id="assistant-widget"');
    expect(out).toContain('/_next/static/chunks/assistant-');
    expect(out).not.toContain('id="search-bar"');
    expect(out).not.toContain('/_next/static/chunks/search-');
    const cloud = (await transformHtml(bytes, ctx(resolveFeatures({ deployment: 'cloud' })))).toString();
    for (const kept of ['id="search-bar"', 'id="assistant-widget"', '/_next/static/chunks/search-', '/_next/static/chunks/assistant-'])
      expect(cloud).toContain(kept);
  });

  it("local-assistant answering here: the export's own assistant widget and script stay, pointed at this origin; the service's assistant stays off", async () => {
    const [, bytes] = pages.find(([p]) => p === 'index.html')!;
    const r = resolveFeatures({ deployment: 'air-gapped', enable: ['local-assistant'] });
    expect(r.features).toMatchObject({ assistant: false, localAssistant: true });
    const out = (await transformHtml(bytes, ctx(r, { assistantBase: '/' }))).toString();
    expect(out).toContain('id="assistant-widget"');
    expect(out).toContain('/_next/static/chunks/assistant-');
    expect(out).toContain('<meta name="docs-api-base" content="/">');
    expect(out).not.toContain('id="search-bar"'); // the service's search stays removed
    expect(hiddenSelectors(r)).not.toContain('#assistant-widget');
  });

  it("local-assistant on: the assistant panel's script is injected, naming the export's own widget it gives way to; off: no panel", async () => {
    const [, bytes] = pages.find(([p]) => p === 'index.html')!;
    const on = resolveFeatures({ deployment: 'air-gapped', enable: ['local-assistant'] });
    const out = (await transformHtml(bytes, ctx(on, { assistantBase: '/' }))).toString();
    const tag = /<script src="\/_airlock\/assistant\.js" defer data-airlock="local-assistant" data-widget="([^"]*)"><\/script>/.exec(out);
    expect(tag).not.toBeNull();
    const widget = tag![1]!.replaceAll('&quot;', '"');
    expect(widget.split(', ')).toEqual(DEFAULT_WIDGETS.assistant.selectors);
    expect(out.indexOf('/_airlock/search.js')).toBeLessThan(out.indexOf('/_airlock/assistant.js')); // the search button first, the panel beside it
    // configured selectors of the export's widget replace the defaults, escaped for the attribute
    const own = (await transformHtml(bytes, ctx(on, { hideSelectors: { assistant: { selectors: ['aside[data-bot="x"]'] } } }))).toString();
    expect(own).toContain('data-widget="aside[data-bot=&quot;x&quot;]"');
    for (const off of [AIR, resolveFeatures({ deployment: 'client-hosted', enable: ['assistant', 'local-search'] })])
      expect((await transformHtml(bytes, ctx(off))).toString()).not.toContain('/_airlock/assistant.js');
  });

  it('configured widgets: listed scripts and selectors go; a selector the streaming rewriter cannot match is still hidden', async () => {
    const page =
      '<!DOCTYPE html><html><head><script src="/js/bot.js"></script><script src="/js/app.js"></script></head>' +
      '<body><aside class="bot">ask</aside><h2>t</h2><p class="after">x</p><p>y</p></body></html>';
    const res = await transformHtmlDetailed(
      page,
      ctx(AIR, { hideSelectors: { assistant: { selectors: ['aside.bot', 'h2 + p'], scripts: [/^\/js\/bot\.js$/] } } }),
    );
    const out = res.html.toString();
    expect(out).not.toContain('<aside');
    expect(out).not.toContain('/js/bot.js');
    expect(out).toContain('/js/app.js');
    expect(out).toContain('<p>y</p>');
    expect(/<style data-airlock="hide">([^<]*)<\/style>/.exec(out)![1]).toContain('h2 + p');
    expect(res.removed['feature-script']).toBe(1);
  });
});

describe('resource hints to other origins', () => {
  const page =
    '<!DOCTYPE html><html><head><title>t</title>' +
    '<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>' +
    '<link rel="dns-prefetch" href="//cdn.jsdelivr.net">' +
    '<link rel="preload" as="font" type="font/woff2" href="https://fonts.gstatic.com/s/inter/v13/x.woff2" crossorigin>' +
    '<link rel="modulepreload" href="https://esm.sh/preact@10">' +
    '<link rel="preload" as="font" href="/fonts/own.woff2" crossorigin>' +
    '<link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Inter">' +
    '<link rel="canonical" href="https://docs.example.com/">' +
    '</head><body><p>x</p></body></html>';

  it('air-gapped: preconnect, dns-prefetch, preload and modulepreload to other origins are removed (no CSP governs a preconnect)', async () => {
    const res = await transformHtmlDetailed(page, ctx(AIR));
    const out = res.html.toString();
    for (const gone of ['fonts.gstatic.com', 'cdn.jsdelivr.net', 'esm.sh']) expect(out).not.toContain(gone);
    expect(res.removed['off-origin-hint']).toBe(4);
    // same-origin hints stay; a third-party stylesheet stays for the CSP to block (and the browser test to count)
    for (const kept of ['href="/fonts/own.woff2"', 'https://fonts.googleapis.com/css2?family=Inter', 'rel="canonical"']) expect(out).toContain(kept);
  });

  it('cloud and client-hosted keep them', async () => {
    for (const r of [resolveFeatures({ deployment: 'cloud' }), resolveFeatures({ deployment: 'client-hosted' })]) {
      const out = (await transformHtml(page, ctx(r))).toString();
      for (const kept of ['rel="preconnect" href="https://fonts.gstatic.com"', '//cdn.jsdelivr.net', 'https://esm.sh/preact@10']) expect(out).toContain(kept);
    }
  });
});

describe('embeds and refreshes to other origins (air-gapped)', () => {
  const page =
    '<!DOCTYPE html><html><head><title>t</title><meta http-equiv="refresh" content="0; url=https://old.example.com/docs">' +
    '<meta http-equiv="refresh" content="5; url=/docs/intro"></head><body>' +
    '<iframe src="https://www.youtube-nocookie.com/embed/abc" title="Product &quot;tour&quot;"></iframe>' +
    '<iframe src="/demo/embed.html" title="own"></iframe><embed src="//cdn.example.net/x.svg"><object data="https://cdn.example.net/y.pdf"></object>' +
    '<p>x</p></body></html>';

  it('an off-origin iframe/embed/object becomes an inert link (Chromium connects before frame-src refuses); an off-origin refresh goes', async () => {
    const res = await transformHtmlDetailed(page, ctx(AIR));
    const out = res.html.toString();
    expect(out).not.toMatch(/<iframe[^>]*youtube/);
    expect(out).toContain('<a href="https://www.youtube.com/watch?v=abc" rel="noreferrer" data-airlock="embed-link">Product &quot;tour&quot;</a>');
    expect(out).toContain(
      '<a href="https://cdn.example.net/y.pdf" rel="noreferrer" data-airlock="embed-removed">object (embedded from another site, not available here)</a>',
    );
    expect(out).not.toMatch(/<embed|<object/);
    expect(out).toContain('<iframe src="/demo/embed.html" title="own"></iframe>');
    expect(out).not.toContain('url=https://old.example.com');
    expect(out).toContain('content="5; url=/docs/intro"');
    expect(res.removed).toMatchObject({ 'off-origin-embed': 3, 'off-origin-refresh': 1 });
  });

  it('a frame of javascript:, data: or another non-web scheme (entity- or tab-obfuscated too) becomes plain text, never a link and never an empty box', async () => {
    const frames =
      '<iframe src="javascript:alert(1)" title="jsframe"></iframe><iframe src="JaVa&#x09;ScRiPt:alert(2)" title="jsframe2"></iframe>' +
      '<iframe src="data:text/html,<script>alert(3)</script>" title="dataframe"></iframe><object data="javascript:alert(4)"></object><embed src="vbscript:x">';
    const res = await transformHtmlDetailed(`<!DOCTYPE html><html><head></head><body>${frames}<iframe src="/own.html"></iframe></body></html>`, ctx(AIR));
    const out = res.html.toString();
    expect(out).not.toMatch(/<iframe[^>]*(javascript|ScRiPt|data:)|<object|<embed/i);
    expect(out).not.toMatch(/href="(javascript|data|vbscript):/i);
    for (const t of ['jsframe', 'jsframe2', 'dataframe', 'object', 'embed'])
      expect(out).toContain(`<span data-airlock="embed-removed">${t} (embedded from another site, not available here)</span>`);
    expect(out).toContain('<iframe src="/own.html"></iframe>');
    expect(res.removed).toMatchObject({ 'off-origin-embed': 5 });
  });

  it('other deployments keep them (their CSP decides)', async () => {
    const out = (await transformHtml(page, ctx(resolveFeatures({ deployment: 'cloud' })))).toString();
    expect(out).toContain('<iframe src="https://www.youtube-nocookie.com/embed/abc"');
    expect(out).toContain('url=https://old.example.com/docs');
  });
});

describe("transformHtml on each vendor's real-world tag shape", () => {
  for (const s of VENDOR_SAMPLES) {
    it(`${s.vendor}: removed when analytics is off, kept when on`, async () => {
      const page = `<!DOCTYPE html><html><head><title>t</title>\n${s.html}\n</head><body><p>x</p></body></html>`;
      const off = await transformHtmlDetailed(page, ctx(AIR));
      const outOff = off.html.toString();
      for (const m of s.markers) expect(outOff, m).not.toContain(m);
      expect(off.removed[`analytics:${s.vendor}`]).toBeGreaterThan(0);
      expect(outOff).toContain('<p>x</p>');
      const on = resolveFeatures({ deployment: 'cloud' });
      const outOn = (await transformHtml(page, ctx(on))).toString();
      for (const m of s.markers) expect(outOn, m).toContain(m);
    });
  }

  it("a script with data-domain or data-website-id that is not a tracker's script name is kept", async () => {
    const page =
      '<html><head><script defer data-domain="docs.example.com" src="/js/app.js"></script><script data-website-id="x" src="/assets/search.js"></script></head></html>';
    const out = (await transformHtml(page, ctx(AIR))).toString();
    expect(out).toContain('src="/js/app.js"');
    expect(out).toContain('src="/assets/search.js"');
  });

  it('a tracker tag whose src is written with character references is judged as the browser reads it, and removed', async () => {
    const page =
      '<html><head><script defer data-domain="docs.example.com" src="https://plausible.corp.example/js/scr&#105;pt.js"></script>' +
      '<script data-website-id="x" src="https://umami.corp.example/script&#46;js"></script>' +
      '<script src="https://www.google&#x2d;analytics.com/analytics.js"></script></head><body><p>x</p></body></html>';
    const out = (await transformHtml(page, ctx(AIR))).toString();
    expect(out).not.toContain('plausible.corp.example');
    expect(out).not.toContain('umami.corp.example');
    expect(out).not.toContain('analytics.js');
    expect(out).toContain('<p>x</p>');
  });

  it('a Next.js page ABOUT analytics keeps its RSC payload and code samples while the real tags go', async () => {
    const page = nextPage(VENDOR_SAMPLES[0]!.html, VENDOR_SAMPLES[3]!.html);
    const out = (await transformHtml(page, ctx(AIR))).toString();
    expect(out).toContain(`self.__next_f.push([1,`);
    expect(out).toContain(`posthog.init('phc_doc')`);
    expect(out).toContain(`<code>gtag('config', 'G-XYZ')</code>`);
    expect(out).toContain('style="color:transparent"');
    for (const m of ['GTM-ABC1234', 'phc_TESTKEY', 'googletagmanager.com']) expect(out).not.toContain(m);
  });

  it('an export that sets window.__AIRLOCK_FEATURES__ itself (flag spoofing) loses that script and its meta', async () => {
    const page = nextPage('<meta name="airlock-features" content="{}"><script>window.__AIRLOCK_FEATURES__={"features":{"assistant":true}}</script>');
    const res = await transformHtmlDetailed(page, ctx(AIR));
    const out = res.html.toString();
    expect(out.match(/__AIRLOCK_FEATURES__=/g)).toHaveLength(1);
    expect(out.match(/name="airlock-features"/g)).toHaveLength(1);
    expect(scriptFlags(out)).toEqual(featuresDocument(AIR));
    expect(res.removed['spoofed-flags']).toBe(1);
  });

  it("an export's own CSP meta is dropped (it would intersect with and block the served policy)", async () => {
    const out = (await transformHtml(nextPage(`<meta http-equiv="Content-Security-Policy" content="script-src 'none'">`), ctx(AIR))).toString();
    expect(out).not.toContain('http-equiv');
  });

  it('CRLF inside an inline script: the reported hash is the one a browser computes (newlines normalised)', async () => {
    const res = await transformHtmlDetailed('<html><head><script>var a = 1;\r\nvar b = 2;\r</script></head></html>', ctx(AIR));
    expect(res.scriptHashes).toContain(sha256Source('var a = 1;\nvar b = 2;\n'));
  });
});

describe('malformed HTML still produces a page', () => {
  const cases: Array<[string, string | Buffer]> = [
    ['unclosed tags', '<html><head><title>x<body><div><p><b>bold<i>it'],
    ['stray closing tags', '</html></head><html><head></head></body></html></html><p>after'],
    ['no head, no body', '<p>just a fragment'],
    ['empty document', ''],
    ['an inline analytics script cut off by end of file', "<html><head><script>gtag('config','G-1');"],
    ['an ordinary inline script cut off by end of file', '<html><head><script>var keep = 1;'],
    ['binary garbage', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256))],
    ['attribute soup', "<html><head><script src=https://www.googletagmanager.com/gtm.js?id=1 async<meta name=docs-api-base content='x\"y'></head>"],
    ['nested heads', '<html><head><head><title>a</title></head><body><head></head></body></html>'],
  ];
  for (const [name, input] of cases) {
    it(`${name}: no throw, flags present, analytics gone`, async () => {
      const res = await transformHtmlDetailed(input, ctx(AIR));
      const out = res.html.toString('latin1');
      expect(out.match(/window\.__AIRLOCK_FEATURES__=/g)).toHaveLength(1);
      expect(out).not.toContain('gtag(');
      expect(out).not.toContain('googletagmanager');
    });
  }

  it('an inline script cut off by end of file is kept as it was and hashed', async () => {
    const res = await transformHtmlDetailed('<html><head><script>var keep = 1;', ctx(AIR));
    expect(res.html.toString()).toMatch(/<script>var keep = 1;$/);
    expect(res.scriptHashes).toContain(sha256Source('var keep = 1;'));
  });
});
