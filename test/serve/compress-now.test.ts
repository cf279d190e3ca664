import { describe, it, expect, afterEach, beforeEach } from 'vitest';
import { join } from 'node:path';
import { readdir, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { variantsLaterHooks } from '../../src/serve/variants-later.js';
import { compressStats } from '../../src/serve/compress-now.js';
import { cleanup, get, setActive, sha256, tempRoot, writeVersion, type SiteFiles } from './helpers.js';
import { until } from '../helpers/wait.js';

/**
 * Compressed from the first request: while a version's variants are not built yet (the build is
 * held here by a hook, never raced against the clock), an asset a client accepts br or gzip for
 * is compressed on request, with the levels the build uses, so the variant written later has the
 * same bytes and the same ETag. Identity stays the answer for ranges, tiny files and images.
 */
let root: string | undefined;
const servers: AirlockServer[] = [];
let release: () => void = () => {};

beforeEach(() => {
  const held = new Promise<void>((r) => (release = r));
  variantsLaterHooks.beforeBuild = () => held;
});
afterEach(async () => {
  release();
  variantsLaterHooks.beforeBuild = null;
  for (const s of servers.splice(0)) await s.close();
  if (root) await cleanup(root);
  root = undefined;
});

/** Text that compresses like a real bundle (not a repeated line): names and numbers vary. */
function script(bytes: number, seed = 1): string {
  let s = '';
  let x = seed;
  for (let i = 0; s.length < bytes; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += `function f${i}_${(x % 9973).toString(36)}(a,b){return a*${x % 97}+b.concat("k${(x >> 8) % 4093}")}\n`;
  }
  return s.slice(0, bytes);
}
const BIG_JS = script(300 * 1024);
const BIG_CSS = Array.from({ length: 4000 }, (_, i) => `.c${i}{color:#${((i * 4099) % 0xffffff).toString(16).padStart(6, '0')};margin:${i % 37}px}`).join('\n');
const HUGE_JS = script(6 * 1024 * 1024, 7);
const PNG = Buffer.alloc(4096, 7);

function site(label = 'v1', o: { huge?: boolean } = {}): SiteFiles {
  const s: SiteFiles = {
    'index.html': `<!doctype html><title>${label}</title><p>` + 'text '.repeat(400) + '</p>',
    'assets/app.js': BIG_JS + `\n// ${label}`,
    'assets/site.css': BIG_CSS,
    'assets/tiny.js': 'x=1',
    'img/pic.png': PNG,
  };
  if (o.huge !== false) s['assets/huge.js'] = HUGE_JS;
  return s;
}

async function storeWithout(label = 'v1'): Promise<string> {
  root = await tempRoot();
  const store = join(root, 'store');
  await writeVersion(store, label, site(label), { variants: false });
  await setActive(store, label);
  return store;
}

async function start(store: string, o: { cacheBytes?: number; log?: (l: string) => void } = {}): Promise<{ srv: AirlockServer; base: string }> {
  const srv = await createAirlockServer({ store, lease: false, log: o.log ?? (() => {}), cacheBytes: o.cacheBytes, transformHtml: (b) => b });
  servers.push(srv);
  return { srv, base: (await srv.listen(0)).slice(0, -1) };
}

const decode = (enc: unknown, body: Buffer) => (enc === 'br' ? brotliDecompressSync(body) : enc === 'gzip' ? gunzipSync(body) : body);
const tag = (content: string | Buffer, coding: 'br' | 'gz' | null) => `"${sha256(Buffer.from(content)).slice(0, 32)}${coding ? '-' + coding : ''}"`;
const variantFiles = async (store: string, label = 'v1') =>
  (await readdir(join(store, 'versions', label, 'variants')).catch(() => [] as string[])).filter((f) => /\.(br|gz)$/.test(f));

describe('compressed from the first request, before any variant is built', () => {
  it('the first request for a large script is compressed (gzip on a tie, br when preferred); the later variant has the same bytes and ETag', async () => {
    const store = await storeWithout();
    const { srv, base } = await start(store);
    const js = site()['assets/app.js'] as string;
    // A tie goes to gzip while the body is made on request (it streams at once, costs less).
    const first = await get(`${base}/assets/app.js`, { 'accept-encoding': 'br, gzip' });
    expect(first.status).toBe(200);
    expect(first.headers['content-encoding']).toBe('gzip');
    expect(decode('gzip', first.body).toString()).toBe(js);
    expect(first.body.length).toBeLessThan(Buffer.byteLength(js) / 3);
    expect(first.headers.vary).toMatch(/accept-encoding/i);
    expect(first.headers.etag).toBe(tag(js, 'gz'));
    expect(first.headers['accept-ranges']).toBeUndefined();
    expect(await variantFiles(store)).toEqual([]); // the build is held: nothing precompressed yet
    const firstBr = await get(`${base}/assets/app.js`, { 'accept-encoding': 'br' });
    expect(firstBr.headers['content-encoding']).toBe('br');
    expect(firstBr.headers.etag).toBe(tag(js, 'br'));
    expect(decode('br', firstBr.body).toString()).toBe(js);

    const css = await get(`${base}/assets/site.css`, { 'accept-encoding': 'gzip, deflate' });
    expect(css.headers['content-encoding']).toBe('gzip');
    expect(css.headers.etag).toBe(tag(BIG_CSS, 'gz'));
    expect(gunzipSync(css.body).toString()).toBe(BIG_CSS);

    const plain = await get(`${base}/assets/app.js`);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['content-length']).toBe(String(Buffer.byteLength(js)));
    expect(plain.headers.etag).toBe(tag(js, null));
    expect(plain.body.toString()).toBe(js);

    // The second request is served from memory, with its length.
    const again = await get(`${base}/assets/app.js`, { 'accept-encoding': 'br, gzip' });
    expect(again.headers['content-length']).toBe(String(first.body.length));
    expect(again.body.equals(first.body)).toBe(true);

    // Transformed HTML has its own codings (html-cache): compressed too, from the first request.
    const page = await get(`${base}/`, { 'accept-encoding': 'br, gzip' });
    expect(page.headers['content-encoding']).toBe('br');

    release();
    await srv.prepared();
    expect((await variantFiles(store)).length).toBeGreaterThan(0);
    for (const enc of ['br', 'gzip'] as const) {
      const now = await get(`${base}/assets/app.js`, { 'accept-encoding': enc });
      expect(now.headers['content-encoding']).toBe(enc);
      expect(now.headers.etag).toBe(tag(js, enc === 'br' ? 'br' : 'gz'));
      expect(now.headers['content-length']).toBe(String(now.body.length));
      expect(now.body.equals(enc === 'br' ? firstBr.body : first.body)).toBe(true); // same levels: same bytes
      expect(decode(enc, now.body).toString()).toBe(js);
    }
    expect((await get(`${base}/assets/app.js`, { 'accept-encoding': 'br, gzip' })).headers['content-encoding']).toBe('br'); // from the file: br again
  });

  it('honours q-values, refusals and wildcards; tiny files and images stay identity', async () => {
    const store = await storeWithout();
    const { base } = await start(store);
    const js = site()['assets/app.js'] as string;
    const cases: Array<[string, string | undefined]> = [
      ['br;q=0, gzip', 'gzip'],
      ['gzip;q=0.9, br;q=0.5', 'gzip'],
      ['identity;q=0, br;q=0.5, gzip;q=0.8', 'gzip'],
      ['gzip;q=0, br;q=0', undefined],
      ['*', 'gzip'],
      ['br;q=1, gzip;q=0.5', 'br'],
      ['*;q=0', undefined],
      ['identity', undefined],
      ['deflate', undefined],
      ['GZIP;Q=1', 'gzip'],
    ];
    for (const [ae, want] of cases) {
      const r = await get(`${base}/assets/app.js`, { 'accept-encoding': ae });
      expect([ae, r.headers['content-encoding']]).toEqual([ae, want]);
      expect(decode(want, r.body).toString()).toBe(js);
      expect(r.headers.vary).toMatch(/accept-encoding/i);
    }
    const tiny = await get(`${base}/assets/tiny.js`, { 'accept-encoding': 'br, gzip' });
    expect(tiny.headers['content-encoding']).toBeUndefined();
    expect(tiny.body.toString()).toBe('x=1');
    const png = await get(`${base}/img/pic.png`, { 'accept-encoding': 'br, gzip' });
    expect(png.headers['content-encoding']).toBeUndefined();
    expect(png.body.equals(PNG)).toBe(true);
  });

  it('ranges get identity bytes; HEAD and 304 answer for the compressed representation', async () => {
    const store = await storeWithout();
    const { base } = await start(store, { log: () => {} });
    const js = site()['assets/app.js'] as string;
    const head = await get(`${base}/assets/app.js`, { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-encoding']).toBe('br');
    expect(head.headers.etag).toBe(tag(js, 'br'));
    expect(head.body.length).toBe(0);

    const ranged = await get(`${base}/assets/app.js`, { 'accept-encoding': 'br, gzip', range: 'bytes=100-199' });
    expect(ranged.status).toBe(206);
    expect(ranged.headers['content-encoding']).toBeUndefined();
    expect(ranged.headers['content-range']).toBe(`bytes 100-199/${Buffer.byteLength(js)}`);
    expect(ranged.body.toString()).toBe(js.slice(100, 200));

    const full = await get(`${base}/assets/app.js`, { 'accept-encoding': 'br' });
    const nm = await get(`${base}/assets/app.js`, { 'accept-encoding': 'br', 'if-none-match': full.headers.etag as string });
    expect(nm.status).toBe(304);
    expect(nm.headers.etag).toBe(full.headers.etag);
    expect(nm.body.length).toBe(0);
    // The identity ETag does not validate the br representation (and the other way round).
    const cross = await get(`${base}/assets/app.js`, { 'accept-encoding': 'br', 'if-none-match': tag(js, null) });
    expect(cross.status).toBe(200);
    expect(cross.headers['content-encoding']).toBe('br');
    const cross2 = await get(`${base}/assets/app.js`, { 'if-none-match': full.headers.etag as string });
    expect(cross2.status).toBe(200);
    expect(cross2.headers['content-encoding']).toBeUndefined();
    // HEAD once the body is in memory: its length too.
    const head2 = await get(`${base}/assets/app.js`, { 'accept-encoding': 'br' }, 'HEAD');
    expect(head2.headers['content-length']).toBe(String(full.body.length));
    // A source gone from the store: a clean 503 saying so (to be retried), never a raw error or a cut compressed body.
    await rm(join(store, 'versions', 'v1', 'site', 'assets', 'site.css'));
    const gone = await get(`${base}/assets/site.css`, { 'accept-encoding': 'br' });
    expect([gone.status, gone.headers['retry-after']]).toEqual([503, '5']);
    expect(gone.headers['content-encoding']).toBeUndefined();
    expect(gone.body.toString()).toBe("Service Unavailable: this page's file is gone from the store\n");
  });

  it('N readers asking at once for the same missing variant share one compression', async () => {
    const store = await storeWithout();
    const { base } = await start(store);
    const js = site()['assets/app.js'] as string;
    const before = compressStats.started;
    const all = await Promise.all(Array.from({ length: 12 }, () => get(`${base}/assets/app.js`, { 'accept-encoding': 'br' })));
    for (const r of all) {
      expect(r.headers['content-encoding']).toBe('br');
      expect(brotliDecompressSync(r.body).toString()).toBe(js);
    }
    expect(compressStats.started - before).toBe(1);
    expect(compressStats.inFlight).toBe(0);
  });

  it('a reader hanging up mid-stream leaves no error, no flight behind; the memory stays within its budget', async () => {
    const store = await storeWithout();
    const logs: string[] = [];
    const budget = 2 * 1024 * 1024; // the 6 MB script's body cannot be kept: compressed for each reader, dropped when none is left
    const { srv, base } = await start(store, { cacheBytes: budget, log: (l) => logs.push(l) });
    const abandoned = compressStats.abandoned;
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = request(`${base}/assets/huge.js`, { headers: { 'accept-encoding': 'gzip' }, agent: false }, (res) => {
          if (res.headers['content-encoding'] !== 'gzip') reject(new Error(`not gzip: ${String(res.headers['content-encoding'])}`));
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve() : reject(err)));
        req.setTimeout(5000, () => reject(new Error('timeout')));
        req.end();
      });
    }
    await until(() => compressStats.inFlight === 0, { timeoutMs: 5000, intervalMs: 1 }).catch(() => undefined);
    expect(compressStats.abandoned - abandoned).toBeGreaterThanOrEqual(1); // stopped, not run to the end for nobody
    const whole = await get(`${base}/assets/huge.js`, { 'accept-encoding': 'gzip' });
    expect(gunzipSync(whole.body).toString()).toBe(HUGE_JS);
    expect(whole.headers['content-length']).toBeUndefined(); // streamed (chunked): too big to keep
    for (const p of ['/assets/app.js', '/assets/site.css']) {
      for (const enc of ['br', 'gzip']) expect((await get(`${base}${p}`, { 'accept-encoding': enc })).headers['content-encoding']).toBe(enc);
    }
    expect(srv.cachedBytes()).toBeLessThanOrEqual(budget);
    expect(srv.cachedBytes()).toBeGreaterThan(0);
    await until(() => compressStats.inFlight === 0, { timeoutMs: 5000, intervalMs: 1 }).catch(() => undefined);
    expect(compressStats.inFlight).toBe(0);
    expect(logs.filter((l) => /error|ERR_/i.test(l))).toEqual([]);
  });

  it('after a switch to a version without variants, its first request is compressed too', async () => {
    root = await tempRoot();
    const store = join(root, 'store');
    await writeVersion(store, 'v1', site('v1', { huge: false })); // precompressed at import
    await writeVersion(store, 'v2', site('v2', { huge: false }), { variants: false });
    await setActive(store, 'v1');
    const { srv, base } = await start(store);
    await setActive(store, 'v2');
    await srv.recheck();
    expect(srv.current().version).toBe('v2');
    const r = await get(`${base}/assets/app.js`, { 'accept-encoding': 'gzip' });
    expect(r.headers['x-airlock-version']).toBe('v2');
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(r.body).toString()).toBe(site('v2')['assets/app.js']);
    expect(await variantFiles(store, 'v2')).toEqual([]);
  });
});
