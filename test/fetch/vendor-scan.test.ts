import { describe, expect, it } from 'vitest';
import { cssRefs, extensionOf, parseKinds, parseMirror, resolveRef, rewriteCss, samplePages, target, vendorFlags } from '../../src/fetch/vendor/index.js';
import { decodeAttr } from '../../src/features/html-attr.js';

/** Vendoring: the pure parts of `--vendor` (stylesheet references, rewriting, flags, what a download becomes). */
describe('cssRefs', () => {
  it('finds @import (string and url forms) and every url(), quoted or not, and skips comments, strings and data: URLs', () => {
    const css = `@import "a.css";@import url('b.css') screen;@import url(c.css);
/* url(commented.png) @import "no.css"; */ .x{content:"url(in-string.png)"}
@font-face{src:url("https://fonts.gstatic.com/s/f.woff2") format("woff2"),url(f.ttf)}
.y{background:url( data:image/png;base64,AAAA )}.z{background-image:url( "sp ace.png" )}`;
    expect(cssRefs(css).map((r) => [r.via, r.url])).toEqual([
      ['import', 'a.css'],
      ['import', 'b.css'],
      ['import', 'c.css'],
      ['url', 'https://fonts.gstatic.com/s/f.woff2'],
      ['url', 'f.ttf'],
      ['url', 'sp ace.png'],
    ]);
  });

  it('rewriteCss replaces exactly the answered references and leaves every other byte alone', () => {
    const css = `@import url("https://x.test/a.css");\n.k{background:url(img/k.png) no-repeat}/* url(https://x.test/c.png) */`;
    const out = rewriteCss(css, (r) => (r.url.startsWith('https://') ? 'COPY.css' : undefined));
    expect(out).toBe(`@import url("COPY.css");\n.k{background:url(img/k.png) no-repeat}/* url(https://x.test/c.png) */`);
    expect(rewriteCss(css, () => undefined)).toBe(css);
  });

  it('survives hostile input in bounded time: unterminated strings and comments, a million parentheses', () => {
    const t0 = Date.now();
    for (const s of ['url("never', '/* open', '@import "x', 'url('.repeat(200_000), '"'.repeat(100_001), ')'.repeat(1_000_000)]) {
      expect(Array.isArray(cssRefs(s))).toBe(true);
    }
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('resolveRef resolves relative, root and protocol-relative forms against the stylesheet and drops fragments', () => {
    expect(resolveRef('../img/a.png#x', 'https://cdn.test/npm/p/dist/t.css')).toBe('https://cdn.test/npm/p/img/a.png');
    expect(resolveRef('//fonts.test/f.woff2', 'https://cdn.test/a.css')).toBe('https://fonts.test/f.woff2');
    expect(resolveRef('http://[bad', 'https://cdn.test/a.css')).toBeNull();
    // A site stylesheet's url() that climbs above the site root stops at the root, as in a browser.
    expect(resolveRef('../../../../x.css', 'https://airlock.invalid/a/b/site.css')).toBe('https://airlock.invalid/x.css');
  });
});

describe('flags and downloads', () => {
  it('parseKinds accepts fonts, styles, scripts only', () => {
    expect([...parseKinds('fonts, styles')]).toEqual(['fonts', 'styles']);
    expect(() => parseKinds('fonts,images')).toThrow(/unknown kind "images"/);
    expect(() => parseKinds(',')).toThrow(/at least one kind/);
  });

  it('parseMirror takes an https origin on the left and an http(s) base on the right', () => {
    expect(parseMirror('https://fonts.googleapis.com=http://127.0.0.1:8080/gf/')).toEqual(['https://fonts.googleapis.com', 'http://127.0.0.1:8080/gf']);
    for (const bad of [
      'https://a.test',
      'http://a.test=http://b.test',
      'https://a.test/path=http://b.test',
      'https://a.test=ftp://b.test',
      'https://a.test=http://b.test/?q=1',
    ]) {
      expect(() => parseMirror(bad), bad).toThrow(/--vendor-mirror/);
    }
  });

  it('target: a mapped origin goes to its mirror (path and query kept); an unmapped non-https URL is refused', () => {
    const m = new Map([['https://fonts.googleapis.com', 'http://127.0.0.1:9/gf']]);
    expect(target('https://fonts.googleapis.com/css2?family=A&display=swap', m)).toBe('http://127.0.0.1:9/gf/css2?family=A&display=swap');
    expect(target('https://cdn.test/a.css', m)).toBe('https://cdn.test/a.css');
    expect(() => target('http://cdn.test/a.css', m)).toThrow(/not https/);
  });

  it('extensionOf: fonts and images by their magic bytes, stylesheets and scripts by a plausible type; anything else is refused', () => {
    expect(extensionOf(Buffer.from('wOF2....'), 'application/octet-stream', 'asset')).toBe('woff2');
    expect(extensionOf(Buffer.from([0, 1, 0, 0, 9]), 'font/ttf', 'asset')).toBe('ttf');
    expect(extensionOf(Buffer.from('<html>'), 'text/html', 'asset')).toBeNull();
    expect(extensionOf(Buffer.from('a{}'), 'text/css; charset=utf-8', 'css')).toBe('css');
    expect(extensionOf(Buffer.from('<html>'), 'text/html', 'css')).toBeNull();
    expect(extensionOf(Buffer.from('x()'), 'application/javascript', 'script')).toBe('js');
    expect(extensionOf(Buffer.from('<html>'), 'text/html', 'script')).toBeNull();
  });

  it('decodeAttr decodes the entities a URL attribute uses', () => {
    expect(decodeAttr('https://f.test/css2?family=A&amp;display=swap')).toBe('https://f.test/css2?family=A&display=swap');
    expect(decodeAttr('a&#38;b&#x26;c&unknown;')).toBe('a&b&c&unknown;');
  });
});

describe('--vendor-observe: flags and the sample of pages', () => {
  it('samplePages: the home page, one page per top-level folder, one per distinct set of scripts and stylesheets; bounded', () => {
    const pages = [
      { path: 'guide/b.html', refs: ['/a.js'] },
      { path: 'guide/a.html', refs: ['/a.js'] },
      { path: 'guide/c.html', refs: ['/a.js', '/mermaid.js'] },
      { path: 'api/x.html', refs: ['/a.js'] },
      { path: 'index.html', refs: ['/a.js'] },
      { path: 'guide/d.html', refs: ['/mermaid.js', '/a.js'] },
    ];
    expect(samplePages(pages, 50)).toEqual(['index.html', 'api/x.html', 'guide/a.html', 'guide/c.html']);
    expect(samplePages(pages, 2)).toEqual(['index.html', 'api/x.html']);
    const many = Array.from({ length: 10_000 }, (_, i) => ({ path: `p${i}/index.html`, refs: [`/t${i}.js`] }));
    expect(samplePages(many, 50)).toHaveLength(50);
  });

  it('vendorFlags: --vendor-observe needs --vendor, --vendor-chromium needs --vendor-observe; the browser comes from the option, then AIRLOCK_CHROMIUM, then /usr/bin/chromium', () => {
    expect(() => vendorFlags(undefined, [], { observe: true })).toThrow(/--vendor-observe needs --vendor/);
    expect(() => vendorFlags('fonts', [], { chromium: '/x' })).toThrow(/--vendor-chromium needs --vendor-observe/);
    expect(vendorFlags('fonts', [], {})?.observe).toBeUndefined();
    expect(vendorFlags('fonts', [], { observe: true, env: {} })?.observe).toEqual({ chromium: '/usr/bin/chromium' });
    expect(vendorFlags('fonts', [], { observe: true, env: { AIRLOCK_CHROMIUM: '/opt/c' } })?.observe).toEqual({ chromium: '/opt/c' });
    expect(vendorFlags('fonts', [], { observe: true, chromium: '/o/c', env: { AIRLOCK_CHROMIUM: '/opt/c' } })?.observe).toEqual({ chromium: '/o/c' });
  });
});
