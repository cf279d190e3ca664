import { describe, expect, it } from 'vitest';
import { detectBasePath } from '../../src/serve/base-path.js';
import { buildRoutes, type Route } from '../../src/serve/routes.js';

/** URL forms of the shapes real exports have, pure: routes from file lists. */
const files = (...paths: string[]) => paths.map((path) => ({ path }));
const resolver = (r: Map<string, Route<{ path: string }>>) => (k: string) => {
  const v = r.get(k);
  return v?.kind === 'file' ? v.file.path : v?.kind === 'redirect' ? `308 ${v.location}` : undefined;
};

/** Every redirect is one 308 to a URL that serves a file: never a chain, never a loop, never off-site. */
function expectSingleHops(r: Map<string, Route<{ path: string }>>): void {
  for (const [from, v] of r) {
    if (v.kind !== 'redirect') continue;
    expect(v.location.startsWith('/') && !v.location.startsWith('//'), from).toBe(true);
    expect(r.get(decodeURIComponent(v.location))?.kind, `${from} -> ${v.location}`).toBe('file');
  }
}

describe('folders named like pages (docs/intro.html/index.html redirect stubs)', () => {
  const r = buildRoutes(files('index.html', 'docs/intro.html/index.html', 'docs/intro/index.html', 'docs/api.html', 'docs/api.html.bak/index.html'));
  const to = resolver(r);
  it('the stub folder keeps its own URLs; the page keeps its own; /docs/intro.html reaches the stub as a static host would', () => {
    expect(to('/docs/intro.html/')).toBe('docs/intro.html/index.html');
    expect(to('/docs/intro.html')).toBe('308 /docs/intro.html/');
    expect(to('/docs/intro/')).toBe('docs/intro/index.html');
    expect(to('/docs/intro')).toBe('308 /docs/intro/');
    expect(to('/docs/api')).toBe('docs/api.html');
    expect(to('/docs/api.html')).toBe('docs/api.html');
    expectSingleHops(r);
  });
  it('documented URL forms: /a/b.html reaches a folder page a/b/index.html with one 308', () => {
    const r2 = buildRoutes(files('index.html', 'guide/index.html', 'guide/setup/index.html'));
    const to2 = resolver(r2);
    expect([to2('/guide.html'), to2('/guide/setup.html'), to2('/guide/setup'), to2('/guide/setup/')]).toEqual([
      '308 /guide/',
      '308 /guide/setup/',
      '308 /guide/setup/',
      'guide/setup/index.html',
    ]);
    expectSingleHops(r2);
  });
});

describe('paths that differ only in case', () => {
  it('rules/A001/ and rules/a001/ are two pages with their own URL forms', () => {
    const r = buildRoutes(files('index.html', 'rules/A001/index.html', 'rules/a001/index.html', 'Guide.html', 'guide.html'));
    const to = resolver(r);
    expect([to('/rules/A001/'), to('/rules/a001/'), to('/rules/A001'), to('/rules/a001.html')]).toEqual([
      'rules/A001/index.html',
      'rules/a001/index.html',
      '308 /rules/A001/',
      '308 /rules/a001/',
    ]);
    expect([to('/Guide'), to('/guide'), to('/GUIDE')]).toEqual(['Guide.html', 'guide.html', undefined]);
    expectSingleHops(r);
  });
});

describe('sites built for a sub-path', () => {
  const site = files('index.html', '404.html', 'guide/index.html', 'guide/setup.html', 'assets/main.3f2a9c1b.css', 'docs/old/index.html');
  const r = buildRoutes(site, 'docs');
  const to = resolver(r);
  it('every URL form is also served under the prefix; redirects keep it; /docs -> /docs/', () => {
    expect([
      to('/docs/'),
      to('/docs'),
      to('/docs/guide/'),
      to('/docs/guide'),
      to('/docs/guide/setup'),
      to('/docs/guide/setup/'),
      to('/docs/assets/main.3f2a9c1b.css'),
    ]).toEqual(['index.html', '308 /docs/', 'guide/index.html', '308 /docs/guide/', 'guide/setup.html', '308 /docs/guide/setup', 'assets/main.3f2a9c1b.css']);
    expect([to('/'), to('/guide/setup')]).toEqual(['index.html', 'guide/setup.html']); // still served at the root
    expectSingleHops(r);
  });
  it("the export's own files under the prefix win over the aliases", () => {
    expect(to('/docs/old/')).toBe('docs/old/index.html');
    expect(to('/docs/docs/old/')).toBe('docs/old/index.html');
  });
  it("detects the prefix from the pages' links (Docusaurus baseUrl, Next.js basePath), and only then", () => {
    const plain = buildRoutes(site);
    const isUrl = (p: string) => plain.has(p);
    const built =
      '<link rel="stylesheet" href="/docs/assets/main.3f2a9c1b.css"><a href="/docs/guide">Guide</a><a href="/docs/guide/setup#x">Setup</a><a href="/docs/">Home</a>';
    expect(detectBasePath(built, isUrl)).toBe('docs');
    expect(
      detectBasePath('<a href="/guide">Guide</a><a href="/guide/setup">Setup</a><link href="/assets/main.3f2a9c1b.css" rel="stylesheet">', isUrl),
    ).toBeNull();
    expect(detectBasePath('<a href="/docs/guide">one broken-looking link</a>', isUrl)).toBeNull();
    expect(
      detectBasePath('<a href="/x/guide">a</a><a href="/x/guide/setup">b</a><a href="/guide">c</a><a href="/guide/setup">d</a><a href="/">e</a>', isUrl),
    ).toBeNull();
    expect(detectBasePath('<a href="//cdn.example.com/guide">a</a><a href="//cdn.example.com/guide/setup">b</a>', isUrl)).toBeNull();
    expect(detectBasePath('<a href="/_airlock/guide">a</a><a href="/_airlock/guide/setup">b</a>', isUrl)).toBeNull();
  });
});
