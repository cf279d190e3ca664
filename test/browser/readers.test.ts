import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importPackage } from '../../src/store/index.js';
import { makePackage } from '../helpers/make-package.js';
import { startAirlock, type Running } from '../relay/helpers.js';
import { CHROMIUM, Sentinel, chromiumAvailable, launchBehindSentinel } from './chromium.js';

/**
 * What a reader meets on a real site, in Debian's Chromium, served air-gapped: links to the site's
 * own published address, a site published under a sub-path (MkDocs Material for
 * `https://org.example.io/project/`), an inline Matomo snippet of a self-hosted tracker, and a
 * nested site's own 404 page. The browser's only way out is a proxy that counts every attempt.
 */
const HOME = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Project</title>
<link rel="canonical" href="https://org.example.io/project/">
<script>
  var _paq = window._paq = window._paq || [];
  _paq.push(['trackPageView']);
  (function() { var u="https://stats.example.org/"; _paq.push(['setTrackerUrl', u+'matomo.php']); _paq.push(['setSiteId', '3']);
    var d=document, g=d.createElement('script'), s=d.getElementsByTagName('script')[0]; g.async=true; g.src=u+'matomo.js'; s.parentNode.insertBefore(g,s); })();
</script>
<noscript><img src="https://stats.example.org/matomo.php?idsite=3&amp;rec=1" alt=""></noscript>
</head><body><h1>Project</h1>
<a id="card" href="https://org.example.io/project/guide/">Get started</a>
<a id="domain" href="https://docs.example.com/guide/#install">Install</a>
<a id="lang" href="/project/ja/">日本語</a>
<a id="rel" href="guide/">Guide</a>
</body></html>`;
const SITE: Record<string, string> = {
  'index.html': HOME,
  'guide/index.html': '<!doctype html><html lang="en"><head><title>Guide</title></head><body><h1>Guide</h1><p id="install">Install it.</p></body></html>',
  'ja/index.html': '<!doctype html><html lang="ja"><head><meta charset="utf-8"><title>ガイド</title></head><body><h1>ガイド</h1></body></html>',
  'product/index.html': '<!doctype html><html><head><title>Product</title></head><body><h1>Product</h1></body></html>',
  'product/404.html': '<!doctype html><html><head><title>Not in product</title></head><body><h1>Not in the product docs</h1></body></html>',
  '404.html': '<!doctype html><html><head><title>Not found</title></head><body><h1>Not found</h1></body></html>',
  // Chromium asks every origin for one; without it the console shows a 404 that no link caused.
  'favicon.ico': 'icon',
};

let root: string;
let sentinel: Sentinel;
let browser: Browser;
let air: Running;

beforeAll(async () => {
  expect(chromiumAvailable(), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`).toBe(true);
  root = await mkdtemp(join(tmpdir(), 'airlock-readers-'));
  const site = join(root, 'site');
  for (const [p, body] of Object.entries(SITE)) {
    await mkdir(dirname(join(site, p)), { recursive: true });
    await writeFile(join(site, p), body);
  }
  const { pkgPath } = await makePackage({ siteDir: site, outDir: join(root, 'pkg'), version: 'v1', domain: 'docs.example.com' });
  const store = join(root, 'store');
  await importPackage(pkgPath, { store, trust: [], allowUnsigned: true, activate: true });
  ({ sentinel, browser } = await launchBehindSentinel());
  air = await startAirlock(store, { deployment: 'air-gapped' });
}, 120_000);
afterAll(async () => {
  await air?.close();
  await browser?.close();
  await sentinel?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

async function violations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __violations: string[] }).__violations);
}

describe("a reader on the site's own links, offline", () => {
  it('every link of the home page lands on a 200 page on this origin; the tracker is gone, nothing leaves', async () => {
    const ctx = await browser.newContext();
    try {
      await ctx.addInitScript(() => {
        const w = window as unknown as { __violations: string[] };
        w.__violations = [];
        document.addEventListener('securitypolicyviolation', (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
      });
      const page = await ctx.newPage();
      const errors: string[] = [];
      page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('response', (r) => void (r.status() >= 400 && errors.push(`${r.status()} ${r.url()}`)));
      const before = sentinel.pagesAsked().length;
      const landed: Array<[string, number | undefined, string, string]> = [];
      for (const id of ['card', 'domain', 'lang', 'rel']) {
        await page.goto(air.origin + '/', { waitUntil: 'networkidle' });
        expect(await violations(page), 'home: CSP violations').toEqual([]);
        const [res] = await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle' }), page.click(`#${id}`)]);
        landed.push([id, res?.status(), new URL(page.url()).origin, await page.locator('h1').innerText()]);
      }
      expect(landed).toEqual([
        ['card', 200, air.origin, 'Guide'],
        ['domain', 200, air.origin, 'Guide'],
        ['lang', 200, air.origin, 'ガイド'],
        ['rel', 200, air.origin, 'Guide'],
      ]);
      expect(new URL(page.url()).pathname).toBe('/guide/');
      // The Matomo snippet, its loader and its pixel are not in the page at all.
      await page.goto(air.origin + '/', { waitUntil: 'networkidle' });
      const html = await page.content();
      for (const gone of ['_paq', 'stats.example.org', 'matomo']) expect(html, gone).not.toContain(gone);
      expect(sentinel.pagesAsked(before)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  it("a miss inside a nested site shows that site's own 404 page, a miss elsewhere the root one", async () => {
    const ctx = await browser.newContext();
    try {
      const page = await ctx.newPage();
      const nested = await page.goto(air.origin + '/product/no-such-page', { waitUntil: 'networkidle' });
      expect([nested?.status(), await page.locator('h1').innerText()]).toEqual([404, 'Not in the product docs']);
      const rootMiss = await page.goto(air.origin + '/no-such-page', { waitUntil: 'networkidle' });
      expect([rootMiss?.status(), await page.locator('h1').innerText()]).toEqual([404, 'Not found']);
    } finally {
      await ctx.close();
    }
  });
});
