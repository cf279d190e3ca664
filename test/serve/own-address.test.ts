import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { featureOptions } from '../../src/serve/features.js';
import { learnAddress } from '../../src/serve/site-address.js';
import { resolveFeatures, transformHtml } from '../../src/features/index.js';
import { cleanup, get, setActive, tempRoot, writeVersion } from './helpers.js';

describe('where a site was published, from the export itself', () => {
  it("the package domain, the home page's canonical link, og:url and <base>, and the sitemap give its origins", () => {
    const home = `<head><link rel="canonical" href="https://Org.Example.io/project/"><meta property="og:url" content="http://www.example.org/project/">
      <base href="https://mirror.example.net/"></head>`;
    const sitemap = '<urlset><url><loc>https://org.example.io/project/guide/</loc></url><url><loc>https://sitemap.example.com/project/</loc></url></urlset>';
    const a = learnAddress('docs.example.com', home, sitemap);
    expect(a.origins).toEqual([
      'http://docs.example.com',
      'http://www.example.org',
      'https://docs.example.com',
      'https://mirror.example.net',
      'https://org.example.io',
      'https://sitemap.example.com',
    ]);
    expect(a.homePath).toBe('/project/');
  });
  it("without a self link, the sitemap's common folder is the home path; a root site has none", () => {
    const sitemap = ['/project/a/', '/project/b/c', '/project/'].map((p) => `<url><loc>https://org.example.io${p}</loc></url>`).join('');
    expect(learnAddress('', '<p>no head</p>', sitemap)).toEqual({ origins: ['https://org.example.io'], homePath: '/project/' });
    expect(learnAddress('docs.example.com', '<link rel="canonical" href="https://docs.example.com/">', '').homePath).toBeNull();
  });
  it('what is not a web URL or a host name is ignored: relative canonicals, javascript:, odd domains', () => {
    const a = learnAddress(
      'not a domain/x',
      '<link rel=canonical href="/relative/"><meta property="og:url" content="javascript:alert(1)">',
      '<loc>ftp://x.example/</loc>',
    );
    expect(a).toEqual({ origins: [], homePath: null });
  });
});

describe("links to the site's own published origins", () => {
  const ctx = {
    ...{ features: resolveFeatures({ deployment: 'air-gapped' }).features },
    deployment: 'air-gapped' as const,
    ownOrigins: ['https://docs.example.com', 'http://docs.example.com'],
  };
  it('become same-origin links, query and fragment kept; other origins stay', async () => {
    const page = `<html><head></head><body>
<a id="a" href="https://docs.example.com/guide/start?x=1&amp;y=2#top">start</a>
<a id="b" href=" //docs.example.com/api/">api</a>
<a id="c" href="HTTPS://DOCS.EXAMPLE.COM">home</a>
<a id="d" href="https://docs.example.com.evil.example/x">look-alike</a>
<a id="e" href="https://github.com/org/repo">repo</a>
<map><area id="f" href="https://docs.example.com/map" alt="m"></map>
</body></html>`;
    const out = (await transformHtml(page, ctx)).toString();
    expect(out).toContain('<a id="a" href="/guide/start?x=1&y=2#top">');
    expect(out).toContain('<a id="b" href="/api/">');
    expect(out).toContain('<a id="c" href="/">');
    expect(out).toContain('<a id="d" href="https://docs.example.com.evil.example/x">');
    expect(out).toContain('<a id="e" href="https://github.com/org/repo">');
    expect(out).toContain('<area id="f" href="/map"');
  });

  it('a path that starts with // stays on this origin: never a protocol-relative link to another site', async () => {
    const hrefs = [
      'https://docs.example.com//evil.example/x',
      'https://docs.example.com/\\evil.example/x',
      'https://docs.example.com/./\t/evil.example/x',
      'https://docs.example.com/a/..//evil.example/x',
      'https://docs.example.com///evil.example/x',
    ];
    const page = hrefs.map((h, i) => `<a id="x${i}" href="${h}">x</a>`).join('\n');
    const out = (await transformHtml(page, ctx)).toString();
    for (let i = 0; i < hrefs.length; i++) expect(out, hrefs[i]).toContain(`<a id="x${i}" href="/evil.example/x">`);
    expect(out).not.toContain('href="//');
  });

  it("frames, forms and a meta refresh to the site's own address are made same-origin too, and air-gapped keeps them; its resources (which an export may not hold) are left to the CSP", async () => {
    const page = `<html><head><meta http-equiv="refresh" content="5; url=https://docs.example.com/new/">
<link rel="stylesheet" href="https://docs.example.com/assets/site.css"><script src="https://docs.example.com/assets/app.js"></script></head>
<body><img src="https://docs.example.com/img/logo.png"><iframe src="https://docs.example.com/embed/demo.html" title="demo"></iframe>
<form action="https://docs.example.com/search/"><input name="q"></form>
<img src="https://cdn.other.example/x.png"><iframe src="https://video.other.example/e/1" title="video"></iframe></body></html>`;
    const out = (await transformHtml(page, ctx)).toString();
    expect(out).toContain('<meta http-equiv="refresh" content="5; url=/new/">');
    expect(out).toContain('<link rel="stylesheet" href="https://docs.example.com/assets/site.css">');
    expect(out).toContain('<script src="https://docs.example.com/assets/app.js"></script>');
    expect(out).toContain('<img src="https://docs.example.com/img/logo.png">');
    expect(out).toContain('<iframe src="/embed/demo.html" title="demo"></iframe>');
    expect(out).toContain('<form action="/search/">');
    // Another origin: left to the air-gapped rules (the frame becomes a plain link).
    expect(out).toContain('<img src="https://cdn.other.example/x.png">');
    expect(out).toContain('data-airlock="embed-removed"');
  });
});

describe('a site published under a sub-path, served from a store', () => {
  let root: string;
  let srv: AirlockServer;
  let base: string;
  beforeAll(async () => {
    root = await tempRoot();
    const store = join(root, 'store');
    // As MkDocs Material builds for https://org.example.io/project/: relative links mostly, a
    // language switcher and cards pointing under the prefix, or at the published address.
    await writeVersion(store, 'v1', {
      'index.html': `<!doctype html><html><head><link rel="canonical" href="https://org.example.io/project/"></head><body>
<a href="guide/">guide</a> <a href="/project/ja/">日本語</a> <a id="card" href="https://org.example.io/project/guide/">card</a>
<a id="dom" href="https://docs.example.com/guide/">by domain</a></body></html>`,
      'guide/index.html': '<!doctype html><p>the guide</p>',
      'ja/index.html': '<!doctype html><p>ガイド</p>',
      '404.html': '<!doctype html><p>missing</p>',
      'product/index.html': '<!doctype html><p>product</p>',
      'product/404.html': '<!doctype html><p>not in the product docs</p>',
    });
    await setActive(store, 'v1');
    srv = await createAirlockServer({ store, lease: false, log: () => {}, ...featureOptions(resolveFeatures({ deployment: 'air-gapped' })) });
    base = (await srv.listen(0)).slice(0, -1);
  });
  afterAll(async () => {
    await srv?.close();
    await cleanup(root);
  });

  it('own-origin links land on 200 pages, and the sub-path the home page names is served too', async () => {
    const home = (await get(base + '/')).body.toString();
    expect(home).toContain('<a id="card" href="/project/guide/">');
    expect(home).toContain('<a id="dom" href="/guide/">');
    for (const href of [...home.matchAll(/href="([^"]+)"/g)].map((m) => new URL(m[1]!, base + '/').pathname)) {
      const r = await get(base + href);
      expect(r.status, href).toBe(200);
    }
    expect((await get(base + '/project/ja/')).body.toString()).toContain('ガイド');
    const bare = await get(base + '/project');
    expect([bare.status, bare.headers.location]).toEqual([308, '/project/']);
  });

  it('a miss under the sub-path gets the nearest 404.html up its path, as at the root', async () => {
    for (const [path, page] of [
      ['/product/x', 'not in the product docs'],
      ['/project/product/x', 'not in the product docs'],
      ['/project/x', 'missing'],
      ['/x', 'missing'],
    ] as const) {
      const r = await get(base + path);
      expect([r.status, r.body.toString()], path).toEqual([404, expect.stringContaining(page) as string]);
    }
  });
});
