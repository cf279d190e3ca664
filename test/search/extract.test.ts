import { describe, expect, it } from 'vitest';
import { decodeEntities, extractPage, MAX_PAGE_TEXT, MAX_SECTIONS } from '../../src/search/extract.js';
import { scanHtml } from '../../src/search/scan-html.js';
import { queryTokens, tokenize } from '../../src/search/tokenize.js';

const page = (body: string, head = '<title>Guide &amp; more</title>') =>
  `<!doctype html><html><head>${head}<script>var nav="in head"</script></head><body>${body}</body></html>`;

describe('extractPage: main content only, sections by heading', () => {
  it('takes main, leaves nav, header, footer, aside, script and style out', () => {
    const p = extractPage(
      page(`<header>Site header</header><nav><a>Navlink</a></nav><aside>Sidebar</aside>
      <main><h1 id="intro">Intro</h1><p>Alpha <b>beta</b></p><script>var hidden = "scripted"</script><style>.x{}</style>
      <h2 id="install">Install it</h2><p>Run npm &lt;install&gt;</p></main><footer>Copyright</footer>`),
    );
    expect(p.title).toBe('Guide & more');
    expect(p.sections).toEqual([
      { anchor: 'intro', heading: 'Intro', text: 'Alpha beta' },
      { anchor: 'install', heading: 'Install it', text: 'Run npm <install>' },
    ]);
    const all = JSON.stringify(p);
    for (const chrome of ['Site header', 'Navlink', 'Sidebar', 'scripted', 'Copyright', 'in head']) expect(all).not.toContain(chrome);
  });

  it('article and [role=main] count as main; a header inside the article keeps its h1', () => {
    const a = extractPage(page('<nav>menu</nav><article><header><h1 id="t">Title</h1></header><p>Body text</p></article>'));
    expect(a.sections).toEqual([{ anchor: 't', heading: 'Title', text: 'Body text' }]);
    const r = extractPage(page('<div role="main"><h2 id="x">X</h2><p>inside</p></div><div>outside</div>'));
    expect(r.sections).toEqual([{ anchor: 'x', heading: 'X', text: 'inside' }]);
  });

  it('without main: body minus chrome; an id inside the heading names the section; no title falls back to the h1', () => {
    const p = extractPage(
      '<body><header>H</header><h1>Top</h1><p>lead</p><h2><a id="deep" href="#deep">Deep</a> link</h2><p>one</p><aside>no</aside><footer>F</footer></body>',
    );
    expect(p.title).toBe('Top');
    expect(p.sections).toEqual([
      { anchor: null, heading: 'Top', text: 'lead' },
      { anchor: 'deep', heading: 'Deep link', text: 'one' },
    ]);
  });

  it('hidden and aria-hidden content is not text, nested elements of the same name close correctly', () => {
    const p = extractPage(page('<main><div hidden>secret<div>inner</div>still</div><div aria-hidden="true">decor</div><p>shown</p></main>'));
    expect(p.sections.map((s) => s.text)).toEqual(['shown']);
  });

  it('words stay apart across block boundaries and entities are decoded', () => {
    const p = extractPage(page('<main><ul><li>one</li><li>two</li></ul><p>caf&eacute;&#39;s &#x4E2D; &nbsp;end</p></main>'));
    expect(p.sections[0]!.text).toBe("one two café's 中 end");
    expect(decodeEntities('&lt;&#0;&#xD800;&bogus;')).toBe('<\uFFFD\uFFFD&bogus;');
  });

  it('hostile markup: unterminated tags, comments and quotes end the page without hanging; bounds hold', () => {
    expect(extractPage('<main><p>ok</p><div title="never closed>more text').sections).toEqual([{ anchor: null, heading: '', text: 'ok' }]);
    expect(extractPage('<main>a<!-- never closed').sections[0]!.text).toBe('a');
    expect(extractPage('<main>1 < 2 and 3 <> 4</main>').sections[0]!.text).toBe('1 < 2 and 3 <> 4');
    const huge = extractPage(`<main>${'word '.repeat(MAX_PAGE_TEXT / 2)}</main>`);
    expect(huge.sections[0]!.text.length).toBeLessThanOrEqual(MAX_PAGE_TEXT);
    const many = extractPage(`<main>${Array.from({ length: MAX_SECTIONS * 2 }, (_, i) => `<h2 id="h${i}">H${i}</h2><p>t${i}</p>`).join('')}</main>`);
    expect(many.sections.length).toBeLessThanOrEqual(MAX_SECTIONS + 1);
    // the headings past the bound keep their words, in the last section's text, and do not rename it
    const last = many.sections.at(-1)!;
    expect(last.heading).toBe(`H${MAX_SECTIONS - 1}`); // the first MAX_SECTIONS headings start sections
    expect(tokenize(last.text)).toEqual(expect.arrayContaining([`h${MAX_SECTIONS + 400}`, `t${MAX_SECTIONS + 400}`, `h${MAX_SECTIONS * 2 - 1}`]));
    const deep = extractPage(`<main>${'<div>'.repeat(50_000)}deep${'</div>'.repeat(50_000)}</main>`);
    expect(deep.sections[0]!.text).toBe('deep');
    const t0 = performance.now();
    extractPage('<a "'.repeat(100_000));
    expect(performance.now() - t0).toBeLessThan(2000); // linear, not quadratic
  });

  it('scanHtml skips raw text elements whole (a </div> inside a script closes nothing)', () => {
    const texts: string[] = [];
    scanHtml('<div><script>if (a</div>) x()</script>kept</div><textarea><b>no</b></textarea>', {
      open: () => {},
      text: (s) => void (s.trim() && texts.push(s.trim())),
      title: () => {},
    });
    expect(texts).toEqual(['kept']);
  });
});

describe('tokenize: Intl.Segmenter for scripts without spaces', () => {
  it('cuts Latin text into lower-case words, full-width letters normalised', () => {
    expect(tokenize('Rate-limits, Ｗｅｂｈｏｏｋｓ & access_tokens v2')).toEqual(['rate', 'limits', 'webhooks', 'access_tokens', 'v2']);
  });

  it('cuts Japanese and Chinese into words, and indexes characters and pairs of them', () => {
    const ja = tokenize('ローカライズ設定を構成します');
    expect(ja).toContain('設定');
    expect(ja).toContain('構成');
    // ICU cuts an unknown katakana word somewhere; the query is cut the same way, so all its parts are there
    for (const part of queryTokens('ローカライズ')) expect(ja).toContain(part);
    expect(ja).toContain('設'); // characters and pairs: a query cut differently still matches
    const zh = tokenize('配置访问令牌');
    expect(zh.some((t) => t === '配置' || t === '访问')).toBe(true);
    expect(queryTokens('設定 webhooks')).toEqual(['設定', 'webhooks']);
  });

  it('drops tokens longer than 40 characters (hashes, minified code)', () => {
    expect(tokenize(`short ${'x'.repeat(41)}`)).toEqual(['short']);
  });
});

describe('extractPage: language and link share', () => {
  it("takes <html lang> as the page's language (lower-cased, a tag only) and measures the share of link text", () => {
    const listing = extractPage(
      '<html lang="zh-CN"><title>Index</title><main><ul><li><a href="/a">alpha entry</a></li><li><a href="/b">beta entry</a></li></ul> x</main></html>',
    );
    expect(listing.lang).toBe('zh-cn');
    expect(listing.linkShare).toBeGreaterThan(0.7);
    const article = extractPage('<html lang="not a tag!"><main><p>Plenty of prose here with one <a href="/x">link</a> in it.</p></main></html>');
    expect(article.lang).toBeUndefined();
    expect(article.linkShare).toBeLessThan(0.2);
  });
});
