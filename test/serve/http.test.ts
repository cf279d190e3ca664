import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { join } from 'node:path';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { cleanup, get, labelledSite, rawGet, rawRequest, setActive, tempRoot, writeVersion } from './helpers.js';

const BIG = Buffer.alloc(300_000);
for (let i = 0; i < BIG.length; i++) BIG[i] = (i * 31 + 7) & 0xff;
const HTML = '<!doctype html><p>' + 'hello airlock '.repeat(200) + '</p>';

let root: string;
let srv: AirlockServer;
let base: string;
let port: number;

beforeAll(async () => {
  root = await tempRoot();
  const store = join(root, 'store');
  await writeVersion(store, 'v1', {
    ...labelledSite('v1'),
    'docs/page.html': HTML,
    'big.bin': BIG,
    'small.txt': '0123456789abcdefghij',
    '_next/static/chunks/main-0a1b2c3d4e.js': 'console.log("x")',
    'img/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    'product/404.html': '<!doctype html><p>product not found page</p>',
    'product/guide/index.html': '<!doctype html><p>product guide</p>',
  });
  await setActive(store, 'v1');
  srv = await createAirlockServer({ store, cacheBytes: 1024 * 1024 });
  base = (await srv.listen(0)).slice(0, -1);
  port = Number(new URL(base).port);
});
afterAll(async () => {
  await srv?.close();
  await cleanup(root);
});

describe('URL forms and redirects', () => {
  it('/a/b, /a/b.html reach a/b.html; /a/ reaches a/index.html', async () => {
    const clean = await get(base + '/docs/page');
    const html = await get(base + '/docs/page.html');
    expect(clean.status).toBe(200);
    expect(clean.body.toString()).toBe(HTML);
    expect(html.body.toString()).toBe(HTML);
    expect((await get(base + '/guide/')).body.toString()).toContain('guide index version=v1');
  });
  it('/a -> single 308 to /a/ keeping the query; /a/b/ -> 308 /a/b', async () => {
    const r = await get(base + '/guide?q=1&x=%20y');
    expect(r.status).toBe(308);
    expect(r.headers.location).toBe('/guide/?q=1&x=%20y');
    expect((await get(base + r.headers.location)).status).toBe(200);
    const r2 = await get(base + '/guide/intro/');
    expect([r2.status, r2.headers.location]).toEqual([308, '/guide/intro']);
  });
  it("unknown paths get 404 with the export's 404.html, no-cache, no validators", async () => {
    const r = await get(base + '/no/such/page');
    expect(r.status).toBe(404);
    expect(r.body.toString()).toContain('not found page version=v1');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers.etag).toBeUndefined();
  });
  it('a miss is answered by the nearest 404.html up its path: a nested site keeps its own error page', async () => {
    for (const p of ['/product/nope', '/product/guide/deeper/nope', '/product/' + 'a/'.repeat(2000) + 'x']) {
      const r = await get(base + p);
      expect([r.status, r.body.toString()], p.slice(0, 40)).toEqual([404, '<!doctype html><p>product not found page</p>']);
      expect(r.headers['cache-control']).toBe('no-cache');
    }
    // A folder whose name only starts like the nested site's is not under it.
    const other = await get(base + '/productx/nope');
    expect(other.status).toBe(404);
    expect(other.body.toString()).toContain('not found page version=v1');
    expect((await get(base + '/product/guide/')).body.toString()).toContain('product guide');
  });
  it('a miss with empty path segments gets the nearest 404.html as well (never a bare Not Found)', async () => {
    for (const [p, want] of [
      ['/product//nope', 'product not found page'],
      ['/product/' + '/'.repeat(2000) + 'nope', 'product not found page'],
      ['/product/guide//x', 'product not found page'],
      ['////', 'not found page version=v1'],
      ['//nope', 'not found page version=v1'],
    ] as const) {
      const r = await rawGet(port, p);
      expect(r.status, p.slice(0, 40)).toBe(404);
      expect(r.body.toString(), p.slice(0, 40)).toContain(want);
    }
  });
});

describe('headers', () => {
  it('every response carries X-Airlock-Version and the security headers', async () => {
    for (const p of ['/', '/nope', '/guide', '/_airlock/health', '/%2f']) {
      const r = await get(base + p);
      expect(r.headers['x-airlock-version'], p).toBe('v1');
      expect(r.headers['x-content-type-options'], p).toBe('nosniff');
      expect(r.headers['x-frame-options'], p).toBe('SAMEORIGIN');
      expect(r.headers['referrer-policy'], p).toBe('no-referrer');
      expect(r.headers['content-security-policy'], p).toContain("frame-ancestors 'self'");
    }
  });
  it('content types with charset; immutable only for hashed assets; HTML revalidates', async () => {
    const page = await get(base + '/');
    const js = await get(base + '/_next/static/chunks/main-0a1b2c3d4e.js');
    const png = await get(base + '/img/logo.png');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.headers['cache-control']).toBe('no-cache');
    expect(page.headers['last-modified']).toBe(new Date('2025-01-02T03:04:05Z').toUTCString());
  });
  it('GET and HEAD only: other methods get 405 with Allow', async () => {
    for (const m of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
      const r = await get(base + '/', {}, m);
      expect(r.status, m).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
    }
    const head = await get(base + '/docs/page', {}, 'HEAD');
    expect([head.status, head.body.length, head.headers['content-length']]).toEqual([200, 0, String(Buffer.byteLength(HTML))]);
  });
});

describe('validators and conditional requests', () => {
  it('strong ETag from the digest; If-None-Match (weak comparison, *) -> 304', async () => {
    const r = await get(base + '/docs/page');
    expect(r.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    for (const inm of [r.headers.etag as string, `W/${r.headers.etag}`, '*', `"zzz", ${r.headers.etag}`]) {
      const c = await get(base + '/docs/page', { 'if-none-match': inm });
      expect(c.status, inm).toBe(304);
      expect(c.body.length).toBe(0);
      expect(c.headers.etag).toBe(r.headers.etag);
    }
    expect((await get(base + '/docs/page', { 'if-none-match': '"other"' })).status).toBe(200);
  });
  it('If-Modified-Since -> 304 only without If-None-Match', async () => {
    const lm = (await get(base + '/')).headers['last-modified'] as string;
    expect((await get(base + '/', { 'if-modified-since': lm })).status).toBe(304);
    expect((await get(base + '/', { 'if-modified-since': new Date(0).toUTCString() })).status).toBe(200);
    expect((await get(base + '/', { 'if-modified-since': lm, 'if-none-match': '"other"' })).status).toBe(200);
  });
  it('If-Match with a stale tag -> 412', async () => {
    expect((await get(base + '/', { 'if-match': '"stale"' })).status).toBe(412);
  });
});

describe('Range (RFC 9110 §14)', () => {
  it('bounded, open-ended and suffix ranges -> 206 with Content-Range (memory and streamed files)', async () => {
    for (const [p, full] of [
      ['/small.txt', Buffer.from('0123456789abcdefghij')],
      ['/big.bin', BIG],
    ] as const) {
      const size = full.length;
      const a = await get(base + p, { range: 'bytes=2-5' });
      expect([a.status, a.headers['content-range']]).toEqual([206, `bytes 2-5/${size}`]);
      expect(a.body.equals(full.subarray(2, 6))).toBe(true);
      const b = await get(base + p, { range: 'bytes=10-' });
      expect(b.body.equals(full.subarray(10))).toBe(true);
      const c = await get(base + p, { range: 'bytes=-7' });
      expect(c.body.equals(full.subarray(size - 7))).toBe(true);
      expect(c.headers['content-length']).toBe('7');
    }
  });
  it('unsatisfiable -> 416 with bytes */size; malformed or multiple ranges -> 200 full', async () => {
    const r = await get(base + '/small.txt', { range: 'bytes=100-' });
    expect([r.status, r.headers['content-range']]).toEqual([416, 'bytes */20']);
    for (const h of ['bytes=5-1', 'bytes=0-1,4-5', 'lines=1-2', 'bytes=x-y']) {
      const m = await get(base + '/small.txt', { range: h });
      expect([m.status, m.body.length], h).toEqual([200, 20]);
    }
  });
  it('If-Range with a current ETag honours the range, a stale one sends everything', async () => {
    const etag = (await get(base + '/small.txt')).headers.etag as string;
    expect((await get(base + '/small.txt', { range: 'bytes=0-1', 'if-range': etag })).status).toBe(206);
    expect((await get(base + '/small.txt', { range: 'bytes=0-1', 'if-range': '"stale"' })).status).toBe(200);
  });
  it('ranges are over the identity bytes even when the client accepts br', async () => {
    const r = await get(base + '/docs/page', { range: 'bytes=0-14', 'accept-encoding': 'br, gzip' });
    expect(r.status).toBe(206);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.body.toString()).toBe(HTML.slice(0, 15));
  });
});

describe('Accept-Encoding negotiation', () => {
  it('br and gzip variants by q-value, with Vary and distinct ETags', async () => {
    const br = await get(base + '/docs/page', { 'accept-encoding': 'gzip, br' });
    const gz = await get(base + '/docs/page', { 'accept-encoding': 'br;q=0.1, gzip' });
    const id = await get(base + '/docs/page', { 'accept-encoding': 'identity' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).toString()).toBe(HTML);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(HTML);
    expect(id.headers['content-encoding']).toBeUndefined();
    for (const r of [br, gz, id]) expect(r.headers.vary).toBe('Accept-Encoding');
    expect(new Set([br.headers.etag, gz.headers.etag, id.headers.etag]).size).toBe(3);
  });
  it('no Vary on incompressible files without variants', async () => {
    expect((await get(base + '/img/logo.png', { 'accept-encoding': 'br' })).headers.vary).toBeUndefined();
  });
});

describe('/_airlock/ routes', () => {
  it('health, version and features', async () => {
    expect(JSON.parse((await get(base + '/_airlock/health')).body.toString())).toEqual({ status: 'ok', version: 'v1' });
    expect(JSON.parse((await get(base + '/_airlock/version')).body.toString())).toEqual({
      version: 'v1',
      domain: 'docs.example.com',
      importedAt: '2025-01-02T03:04:05.000Z',
      pageCount: 3,
    });
    const f = JSON.parse((await get(base + '/_airlock/features')).body.toString());
    expect(f.deployment).toBe('air-gapped');
  });
  it('the reserved prefix never reaches the site', async () => {
    const r = await rawGet(port, '/_airlock/index.html');
    expect(r.status).toBe(404);
    expect(r.body.toString()).not.toContain('version=v1');
  });
  it('keep-alive connection serves several requests', async () => {
    const r = await rawRequest(port, 'GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /small.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(r.raw.match(/HTTP\/1\.1 200 OK/g)?.length).toBe(2);
  });
});
