import { describe, it, expect } from 'vitest';
import { parseTarget } from '../../src/serve/request-path.js';
import { buildRoutes } from '../../src/serve/routes.js';
import { parseRange } from '../../src/serve/range.js';
import { evaluate, ifRangeHolds, weakMatch } from '../../src/serve/conditional.js';
import { negotiate } from '../../src/serve/encoding.js';
import { cacheControlFor, contentTypeFor, compressible } from '../../src/serve/file-meta.js';

describe('parseTarget', () => {
  it('passes plain paths through and splits the query', () => {
    expect(parseTarget('/a/b?x=1&y')).toEqual({ ok: true, path: '/a/b', query: 'x=1&y' });
  });
  it('decodes percent-escapes once into UTF-8', () => {
    expect(parseTarget('/caf%C3%A9')).toMatchObject({ ok: true, path: '/café' });
    expect(parseTarget('/%252e%252e/x')).toMatchObject({ ok: true, path: '/%2e%2e/x' }); // double-encoded stays literal
  });
  it.each([
    ['/a%2fb', 'encoded slash'],
    ['/a%2Fb', 'encoded slash upper'],
    ['/a%5cb', 'encoded backslash'],
    ['/a\\b', 'raw backslash'],
    ['/a%00b', 'NUL'],
    ['/%c0%ae%c0%ae/x', 'overlong dot'],
    ['/%ff', 'invalid utf-8'],
    ['/%zz', 'bad escape'],
    ['/%e', 'short escape'],
    ['http://evil.example/', 'absolute-form'],
    ['*', 'asterisk-form'],
    ['/a%0d%0ab', 'encoded CRLF'],
  ])('400 for %s (%s)', (url) => {
    expect(parseTarget(url)).toMatchObject({ ok: false, status: 400 });
  });
  it.each(['/../x', '/a/./b', '/%2e%2e/x', '/.%2e/x', '/.env', '/a/.git/config', '//evil.example/x', '/a//b'])('404 for %s', (url) => {
    expect(parseTarget(url)).toMatchObject({ ok: false, status: 404 });
  });
  it('414 for a path longer than the limit', () => {
    expect(parseTarget('/' + 'a'.repeat(10_000))).toMatchObject({ ok: false, status: 414 });
  });
});

describe('buildRoutes', () => {
  const files = ['index.html', 'a/b.html', 'a/index.html', 'c/index.html', 'c.html', '.env', 'x/.git/config', '_airlock/health', 'img/logo.png'].map(
    (path) => ({ path }),
  );
  const r = buildRoutes(files);
  const to = (k: string) => {
    const v = r.get(k);
    return v?.kind === 'file' ? v.file.path : v?.kind === 'redirect' ? `308 ${v.location}` : undefined;
  };
  it('maps every URL form of a page to its file', () => {
    expect([to('/'), to('/index.html'), to('/a/b'), to('/a/b.html'), to('/a/'), to('/a/index.html')]).toEqual([
      'index.html',
      'index.html',
      'a/b.html',
      'a/b.html',
      'a/index.html',
      'a/index.html',
    ]);
  });
  it('redirects once between folder and page forms, never to a redirect', () => {
    expect([to('/a'), to('/a/b/')]).toEqual(['308 /a/', '308 /a/b']);
    for (const v of r.values()) if (v.kind === 'redirect') expect(r.get(v.location)?.kind).toBe('file');
  });
  it('prefers the page a.html over the folder a/index.html for /c', () => {
    expect([to('/c'), to('/c/')]).toEqual(['c.html', 'c/index.html']);
  });
  it('never exposes dotfiles or the reserved /_airlock/ prefix', () => {
    expect([to('/.env'), to('/x/.git/config'), to('/_airlock/health')]).toEqual([undefined, undefined, undefined]);
  });
  it('encodes Locations so they always start with a single slash', () => {
    const r2 = buildRoutes([{ path: 'caf é/index.html' }]);
    expect(r2.get('/caf é')).toEqual({ kind: 'redirect', location: '/caf%20%C3%A9/' });
  });
});

describe('parseRange (RFC 9110 §14)', () => {
  it.each([
    ['bytes=0-9', { kind: 'range', start: 0, end: 9 }],
    ['bytes=5-', { kind: 'range', start: 5, end: 99 }],
    ['bytes=-10', { kind: 'range', start: 90, end: 99 }],
    ['bytes=90-200', { kind: 'range', start: 90, end: 99 }],
    ['bytes=-500', { kind: 'range', start: 0, end: 99 }],
    ['bytes=100-', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=9-1', { kind: 'none' }],
    ['bytes=0-1,5-6', { kind: 'none' }],
    ['items=0-1', { kind: 'none' }],
    ['bytes=abc', { kind: 'none' }],
    ['bytes=-', { kind: 'none' }],
    ['bytes=99999999999999999999-', { kind: 'none' }],
  ])('%s on 100 bytes', (h, want) => {
    expect(parseRange(h, 100)).toEqual(want);
  });
});

describe('conditionals (RFC 9110 §13)', () => {
  const v = { etag: '"abc"', lastModifiedSec: 1_000_000 };
  const date = (s: number) => new Date(s * 1000).toUTCString();
  it('If-None-Match uses weak comparison and honours *', () => {
    expect(weakMatch('W/"abc"', '"abc"')).toBe(true);
    expect(evaluate({ 'if-none-match': '"x", "abc"' }, v)).toBe('not-modified');
    expect(evaluate({ 'if-none-match': '*' }, v)).toBe('not-modified');
    expect(evaluate({ 'if-none-match': '"x"' }, v)).toBe('ok');
  });
  it('If-Modified-Since only counts without If-None-Match', () => {
    expect(evaluate({ 'if-modified-since': date(1_000_000) }, v)).toBe('not-modified');
    expect(evaluate({ 'if-modified-since': date(999_999) }, v)).toBe('ok');
    expect(evaluate({ 'if-none-match': '"x"', 'if-modified-since': date(1_000_000) }, v)).toBe('ok');
    expect(evaluate({ 'if-modified-since': 'yesterday-ish' }, v)).toBe('ok');
  });
  it('If-Match fails with 412 semantics on a weak or different tag', () => {
    expect(evaluate({ 'if-match': 'W/"abc"' }, v)).toBe('failed');
    expect(evaluate({ 'if-match': '"abc"' }, v)).toBe('ok');
  });
  it('If-Range holds only for the same strong ETag or the exact date', () => {
    expect([ifRangeHolds('"abc"', v), ifRangeHolds('"x"', v), ifRangeHolds('W/"abc"', v), ifRangeHolds(date(1_000_000), v), ifRangeHolds(date(5), v)]).toEqual([
      true,
      false,
      false,
      true,
      false,
    ]);
  });
});

describe('negotiate (RFC 9110 §12.5.3)', () => {
  const both = { br: true, gzip: true };
  it.each([
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0.5, gzip;q=0.8', 'gzip'],
    ['br;q=0, gzip;q=0', null],
    ['*', 'br'],
    ['*;q=0, gzip', 'gzip'],
    ['identity', null],
    [undefined, null],
  ])('%s -> %s', (h, want) => {
    expect(negotiate(h, both)).toBe(want);
  });
  it('only offers variants the file has', () => {
    expect(negotiate('br, gzip', { br: false, gzip: true })).toBe('gzip');
  });
});

describe('file metadata', () => {
  it('content types carry a charset for text', () => {
    expect([contentTypeFor('a/b.html'), contentTypeFor('x.js'), contentTypeFor('logo.png'), contentTypeFor('LICENSE')]).toEqual([
      'text/html; charset=utf-8',
      'text/javascript; charset=utf-8',
      'image/png',
      'application/octet-stream',
    ]);
  });
  it('immutable only for content-hashed names, never HTML', () => {
    const cc = (p: string) => cacheControlFor(p, contentTypeFor(p));
    expect(cc('_next/static/chunks/main.js')).toContain('immutable');
    expect(cc('assets/app.3f2a9c1d.css')).toContain('immutable');
    expect(cc('assets/app-3f2a9c1d8e.js')).toContain('immutable');
    expect(cc('assets/app.css')).toBe('no-cache');
    expect(cc('assets/facebook.css')).toBe('no-cache');
    expect(cc('12345678.html')).toBe('no-cache');
    expect(cc('_next/static/page.html')).toBe('no-cache');
  });
  it('knows which types are compressible', () => {
    expect([compressible('text/css; charset=utf-8'), compressible('application/json'), compressible('image/svg+xml'), compressible('image/png')]).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});
