import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observePages } from '../../src/fetch/vendor/index.js';
import type { Got } from '../../src/fetch/vendor/get.js';
import { CHROMIUM, chromiumAvailable } from './chromium.js';

/**
 * `--vendor-observe` against hostile pages, in Debian's Chromium: whatever a page does, the
 * observation is bounded (pages, time per page, distinct URLs) and nothing leaves but through
 * vendoring's downloader (here a stub that records what it is asked).
 */
let root: string;
let local: Server;
let localHits = 0;
let localPort = 0;
const files = new Map<string, string>();
const asked: string[] = [];
const font = Buffer.concat([Buffer.from('wOF2'), Buffer.alloc(60)]);
const get = async (url: string): Promise<Got> => {
  asked.push(url);
  if (url.includes('/hang/')) return new Promise<Got>(() => {}); // a CDN that never answers
  return url.endsWith('.js') ? { url, bytes: Buffer.from('void 0;'), contentType: 'text/javascript' } : { url, bytes: font, contentType: 'font/woff2' };
};

beforeAll(async () => {
  expect(chromiumAvailable(), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`).toBe(true);
  root = await mkdtemp(join(tmpdir(), 'airlock-observe-'));
  local = createServer((_req, res) => {
    localHits++;
    res.end('x');
  });
  await new Promise<void>((r) => local.listen(0, '127.0.0.1', r));
  localPort = (local.address() as { port: number }).port;
  const pages: Record<string, string> = {
    'index.html': `<!DOCTYPE html><title>many</title><script>for (let i = 0; i < 10000; i++) { const s = document.createElement('script'); s.src = 'https://cdn.test/many/' + i + '.js'; document.head.appendChild(s); }</script>`,
    'many/index.html': `<!DOCTYPE html><title>many</title><script>for (let i = 0; i < 300; i++) { const s = document.createElement('script'); s.src = 'https://cdn.test/more/' + i + '.js'; document.head.appendChild(s); }</script>`,
    'hang/index.html': `<!DOCTYPE html><title>hang</title><script src="https://cdn.test/hang/forever.js"></script>`,
    'escape/index.html': `<!DOCTYPE html><title>escape</title><script>
      const s = document.createElement('script'); s.src = 'http://127.0.0.1:${localPort}/x.js'; document.head.appendChild(s);
      fetch('http://127.0.0.1:${localPort}/y').catch(() => {});
      const l = document.createElement('link'); l.rel = 'stylesheet'; l.href = 'file:///etc/passwd'; document.head.appendChild(l);
      new FontFace('F', 'url(https://fonts.test/ok.woff2)').load().catch(() => {});
      const t = document.createElement('script'); t.src = 'https://www.googletagmanager.com/gtag/js?id=G-1'; document.head.appendChild(t);
    </script>`,
  };
  for (const [p, c] of Object.entries(pages)) {
    const f = join(root, ...p.split('/'));
    await mkdir(join(f, '..'), { recursive: true });
    await writeFile(f, c);
    files.set(p, f);
  }
}, 60_000);
afterAll(async () => {
  await new Promise<void>((r) => (local ? local.close(() => r()) : r()));
  if (root) await rm(root, { recursive: true, force: true });
});

describe('observePages on hostile pages', () => {
  it('a page that asks for 10,000 URLs and one that never finishes loading: neither outlasts its time limit (the hanging one is cut at it), the URLs at the bound', async () => {
    const t0 = Date.now();
    const r = await observePages(files, ['index.html', 'hang/index.html'], { chromium: CHROMIUM, get, maxPages: 50, pageTimeoutMs: 4000, maxRequests: 200 });
    expect(r.report).toMatchObject({ browser: true, pages: 2 });
    // The hanging page is always cut at its limit; the other may finish first on a fast machine
    // (the requests past the bound are refused at once), and its time is bounded either way.
    expect(r.report.browser && r.report.timedOut).toBeGreaterThanOrEqual(1);
    expect(r.report.browser && r.report.timedOut).toBeLessThanOrEqual(2);
    expect(r.report.browser && r.report.requests).toBeLessThanOrEqual(200);
    expect(r.requests.length).toBeLessThanOrEqual(200);
    expect(asked.filter((u) => u.includes('/many/')).length).toBeLessThanOrEqual(200);
    expect(Date.now() - t0).toBeLessThan(60_000);
  }, 90_000);

  it('more distinct URLs than the bound: the first ones are recorded, the rest refused (capped)', async () => {
    const r = await observePages(files, ['many/index.html'], { chromium: CHROMIUM, get, maxPages: 50, pageTimeoutMs: 15_000, maxRequests: 20 });
    expect(r.report).toMatchObject({ browser: true, pages: 1, capped: true, requests: 20 });
    expect(r.requests.length).toBe(20);
  }, 60_000);

  it('the sample is bounded by maxPages', async () => {
    const r = await observePages(files, ['escape/index.html', 'many/index.html'], {
      chromium: CHROMIUM,
      get,
      maxPages: 1,
      pageTimeoutMs: 8000,
      maxRequests: 20,
    });
    expect(r.report).toMatchObject({ browser: true, pages: 1 });
  }, 60_000);

  it('http, 127.0.0.1 and file: requests and trackers are never made: refused, reported as not vendorable, and the local server sees nothing', async () => {
    asked.length = 0;
    const r = await observePages(files, ['escape/index.html'], { chromium: CHROMIUM, get, maxPages: 50, pageTimeoutMs: 8000, maxRequests: 200 });
    expect(localHits).toBe(0);
    expect(asked).toEqual(['https://fonts.test/ok.woff2']);
    expect(r.requests).toEqual([{ url: 'https://fonts.test/ok.woff2', type: 'font' }]);
    expect(r.skipped).toEqual([`http://127.0.0.1:${localPort}/x.js`]);
  }, 60_000);

  it('without Chromium: no observation, and the reason', async () => {
    const r = await observePages(files, ['index.html'], { chromium: join(root, 'no-chromium'), get, maxPages: 50, pageTimeoutMs: 1000, maxRequests: 10 });
    expect(r.report).toEqual({ browser: false, reason: `no Chromium at ${join(root, 'no-chromium')}` });
    expect(r.requests).toEqual([]);
  });
});
