import { describe, expect, it } from 'vitest';
import { resolveFeatures, transformHtmlDetailed } from '../../src/features/index.js';
import { vendorKey } from '../../src/features/html-vendor.js';
import { vendorMapScript } from '../../src/serve/vendor-map.js';

/** Vendoring: serve's page transform points references of vendored files at their same-origin copies, in its one pass. */
const AIR = resolveFeatures({ deployment: 'air-gapped' });
const F = '/_airlock/vendor/' + 'a'.repeat(64) + '.css';
const S = '/_airlock/vendor/' + 'b'.repeat(64) + '.css';
const J = '/_airlock/vendor/' + 'c'.repeat(64) + '.js';
const vendorMap = {
  'https://fonts.googleapis.com/css2?family=Inter&display=swap': F,
  '/css/site.css': S,
  'https://cdn.jsdelivr.net/npm/x@1/x.min.js': J,
};
const page = `<!DOCTYPE html><html><head>
<link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Inter&amp;display=swap">
<link rel="stylesheet" href="/css/site.css" integrity="sha384-xyz">
<link rel="preload" as="style" href="/css/site.css">
<link rel="stylesheet" href="https://cdn.other.test/not-vendored.css">
<script src="//cdn.jsdelivr.net/npm/x@1/x.min.js" defer></script>
<script src="https://www.googletagmanager.com/gtag/js?id=G-1"></script>
</head><body><p>x</p></body></html>`;

describe('vendor mapping in the page transform', () => {
  it('maps stylesheet links and script sources the map names (entity-encoded and protocol-relative too), drops integrity, leaves the rest', async () => {
    const r = await transformHtmlDetailed(page, { features: AIR.features, deployment: AIR.deployment, vendorMap });
    const out = r.html.toString();
    expect(out).toContain(`<link rel="stylesheet" href="${F}">`);
    expect(out).toContain(`<link rel="stylesheet" href="${S}">`);
    expect(out).toContain(`<script src="${J}" defer></script>`);
    expect(out).toContain('<link rel="preload" as="style" href="/css/site.css">'); // only stylesheets are mapped
    expect(out).toContain('https://cdn.other.test/not-vendored.css');
    expect(out).not.toContain('googletagmanager'); // analytics removal still wins
    expect(r.removed.vendored).toBe(3);
  });

  it('a page whose <head> is implied (legal HTML: `<!doctype html><title>…`): the flags and the vendor map come before its first head element, so its scripts find them', async () => {
    for (const implied of [
      '<!doctype html><title>T</title><script>var s=document.createElement("script");s.src="https://cdn.jsdelivr.net/npm/x@1/x.min.js";document.head.appendChild(s)</script><h1>x</h1>',
      '<!doctype html><html lang="en"><meta charset="utf-8"><script>run()</script><p>x</p>',
      '<!doctype html><script>run()</script>',
      '<!doctype html><p>intro</p><svg><title>icon</title></svg><script>run()</script>',
    ]) {
      const out = (await transformHtmlDetailed(implied, { features: AIR.features, deployment: AIR.deployment, vendorMap })).html.toString();
      const at = (s: string) => out.indexOf(s);
      const sites = at(implied.includes('run()') ? 'run()' : 'document.createElement');
      expect(at('<script src="/_airlock/vendor-map.js"'), implied).toBeGreaterThan(-1);
      expect(at('window.__AIRLOCK_FEATURES__'), implied).toBeLessThan(sites);
      expect(at('<script src="/_airlock/vendor-map.js"'), implied).toBeLessThan(sites);
      expect(out.match(/window\.__AIRLOCK_FEATURES__=/g), implied).toHaveLength(1);
    }
    // never inside an svg's foreign content
    const svg = (
      await transformHtmlDetailed('<!doctype html><p>intro</p><svg><title>icon</title></svg>', {
        features: AIR.features,
        deployment: AIR.deployment,
        vendorMap,
      })
    ).html.toString();
    expect(svg.indexOf('airlock-features')).toBeLessThan(svg.indexOf('<svg>'));
    // an explicit head or body still gets it inside, at its start
    const explicit = (
      await transformHtmlDetailed('<html><head><title>T</title></head><body><script>run()</script></body></html>', {
        features: AIR.features,
        deployment: AIR.deployment,
        vendorMap,
      })
    ).html.toString();
    expect(explicit).toMatch(/^<html><head><meta name="airlock-features"/);
  });

  it('without a map the page is exactly what it was without vendoring', async () => {
    const a = await transformHtmlDetailed(page, { features: AIR.features, deployment: AIR.deployment });
    const b = await transformHtmlDetailed(page, { features: AIR.features, deployment: AIR.deployment, vendorMap: {} });
    expect(b.html.equals(a.html)).toBe(true);
    expect(a.html.toString()).toContain('href="https://fonts.googleapis.com/css2?family=Inter&amp;display=swap"');
  });

  it('vendorKey: only https, protocol-relative and root paths are keys; a map key like __proto__ cannot be reached', () => {
    expect(vendorKey(' https://a.test/x.css#frag ')).toBe('https://a.test/x.css');
    expect(vendorKey('//a.test/x.css')).toBe('https://a.test/x.css');
    expect(vendorKey('/a/../b.css')).toBe('/b.css');
    expect(vendorKey('http://a.test/x.css')).toBeNull();
    expect(vendorKey('x.css')).toBeNull();
  });
});

describe('consent banners and leftover empty script tags, analytics off', () => {
  const consent = `<!DOCTYPE html><html><head>
<script src="https://cdn.cookielaw.org/scripttemplates/otSDKStub.js" type="text/javascript" charset="UTF-8" data-domain-script="0190"></script>
<script type="text/javascript">
function OptanonWrapper() { }
</script>
<script type="text/javascript"></script>
<script type="module" data-k='say "hi"' async>import "/a.js";</script>
<script type="text/partytown">gtag('config', 'G-1')</script>
</head><body><button id="ot-sdk-btn">Cookie settings</button><div id="onetrust-consent-sdk">banner</div></body></html>`;

  it('the OneTrust loader, its OptanonWrapper bootstrap and banner go, and no empty <script> is left; kept typed scripts keep their tags and hashes', async () => {
    const r = await transformHtmlDetailed(consent, { features: AIR.features, deployment: AIR.deployment });
    const out = r.html.toString();
    expect(out).not.toMatch(/cookielaw|OptanonWrapper/);
    expect(out.slice(out.indexOf('<body>'))).not.toMatch(/ot-sdk-btn|onetrust-consent-sdk/); // (the hide style in <head> names them)
    expect(out).not.toMatch(/<script type="text\/javascript">\s*<\/script>/);
    expect(out).not.toContain('<script type="text/partytown">');
    expect(out).toContain(`<script type="module" data-k="say &quot;hi&quot;" async>import "/a.js";</script>`);
    expect(r.scriptHashes.length).toBe(2); // airlock's own flags script and the kept module
  });

  it('analytics on: typed scripts are left exactly as they were', async () => {
    const on = resolveFeatures({ deployment: 'cloud', enable: ['analytics'] });
    const out = (await transformHtmlDetailed(consent, { features: on.features, deployment: on.deployment })).html.toString();
    expect(out).toContain('<script type="text/javascript">\nfunction OptanonWrapper() { }\n</script>');
    expect(out).toContain('<script type="text/javascript"></script>');
    expect(out).toContain(`<script type="module" data-k='say "hi"' async>`);
  });
});

describe('relative stylesheet references (vendoring), resolved against the page path', () => {
  const rel = `<!DOCTYPE html><html><head>
<link rel="stylesheet" href="../../css/site.css">
<link rel="stylesheet" href="../../../../../css/site.css">
<link rel="stylesheet" href="other.css">
</head><body></body></html>`;

  it('a page two folders deep: ../../css/site.css is the root path /css/site.css and is mapped; climbing above the root stops at the root, as in a browser', async () => {
    const r = await transformHtmlDetailed(rel, { features: AIR.features, deployment: AIR.deployment, vendorMap }, 'guide/deep/page.html');
    const out = r.html.toString();
    expect(out.match(new RegExp(`href="${S}"`, 'g'))?.length).toBe(2);
    expect(out).toContain('href="other.css"');
    expect(r.removed.vendored).toBe(2);
  });

  it('without the page path a relative reference is left as it is', async () => {
    const out = (await transformHtmlDetailed(rel, { features: AIR.features, deployment: AIR.deployment, vendorMap })).html.toString();
    expect(out).toContain('href="../../css/site.css"');
  });

  it('vendorKey resolves a relative reference against a page path; a scheme other than https is never a key', () => {
    expect(vendorKey('../x.css', 'a/b/p.html')).toBe('/a/x.css');
    expect(vendorKey('x.css', 'p.html')).toBe('/x.css');
    expect(vendorKey('../../../../x.css', 'a/p.html')).toBe('/x.css');
    expect(vendorKey('javascript:alert(1)', 'a/p.html')).toBeNull();
    expect(vendorKey('file:///etc/passwd', 'a/p.html')).toBeNull();
  });
});

describe('run-time loads of vendored URLs (/_airlock/vendor-map.js)', () => {
  it("the map script goes first in <head>, after airlock's flags and before the site's scripts, only when third-party URLs are carried", async () => {
    const html = '<!DOCTYPE html><html><head><script>site()</script></head><body></body></html>';
    const out = (await transformHtmlDetailed(html, { features: AIR.features, deployment: AIR.deployment, vendorMap })).html.toString();
    const tag = '<script src="/_airlock/vendor-map.js" data-airlock="vendor-map"></script>';
    expect(out.indexOf(tag)).toBeGreaterThan(out.indexOf('__AIRLOCK_FEATURES__'));
    expect(out.indexOf(tag)).toBeLessThan(out.indexOf('site()'));
    for (const m of [undefined, {}, { '/css/site.css': S }] as Array<Record<string, string> | undefined>) {
      expect(
        (await transformHtmlDetailed(html, { features: AIR.features, deployment: AIR.deployment, ...(m ? { vendorMap: m } : {}) })).html.toString(),
      ).not.toContain('vendor-map');
    }
  });

  it("vendorMapScript: the carried https URLs → their copies (not the site stylesheets' paths), markup-safe; none without third-party URLs", () => {
    const file = (urls: string[], site: string[] = []) => ({ path: `vendor/${'d'.repeat(64)}.js`, file: '/x', size: 1, sha256: 'd'.repeat(64), urls, site });
    expect(vendorMapScript([])).toBeNull();
    expect(vendorMapScript([file([], ['css/site.css'])])).toBeNull();
    const js = vendorMapScript([file(['https://cdn.test/a.js?</script><x>'], ['css/site.css'])])!;
    expect(js).toContain(`"https://cdn.test/a.js?\\u003c/script>\\u003cx>":"/_airlock/vendor/${'d'.repeat(64)}.js"`);
    expect(js).not.toContain('css/site.css');
    expect(() => new Function(js)).not.toThrow(); // it parses
  });
});
