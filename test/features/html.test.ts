import { describe, expect, it } from 'vitest';
import {
  ANALYTICS_VENDORS, cspFor, featuresDocument, featuresScript, resolveFeatures, transformHtml, transformHtmlDetailed,
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
    expect(res.removed).toEqual({});
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

  it("the flags go first in <head>", async () => {
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

  it('removes a listed feature script only when the widgets table says so', async () => {
    const [, bytes] = pages.find(([p]) => p === 'index.html')!;
    const plain = (await transformHtml(bytes, ctx(AIR))).toString();
    expect(plain).toContain('/_next/static/chunks/assistant-');
    const res = await transformHtmlDetailed(bytes, ctx(AIR, { hideSelectors: { assistant: { scripts: [/\/chunks\/assistant-[0-9a-f]+\.js$/] } } }));
    expect(res.html.toString()).not.toContain('/_next/static/chunks/assistant-');
    expect(res.html.toString()).toContain('/_next/static/chunks/search-');
    expect(res.removed['feature-script']).toBe(1);
  });
});

describe('transformHtml on each vendor\'s real-world tag shape', () => {
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

  it('an export\'s own CSP meta is dropped (it would intersect with and block the served policy)', async () => {
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
    ['an inline analytics script cut off by end of file', '<html><head><script>gtag(\'config\',\'G-1\');'],
    ['an ordinary inline script cut off by end of file', '<html><head><script>var keep = 1;'],
    ['binary garbage', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256))],
    ['attribute soup', '<html><head><script src=https://www.googletagmanager.com/gtm.js?id=1 async<meta name=docs-api-base content=\'x"y\'></head>'],
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
