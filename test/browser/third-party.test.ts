import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSite } from '../../fixtures/generate.js';
import { THIRD_PARTY_ORIGINS } from '../../fixtures/site-traits.js';
import { importPackage } from '../../src/store/index.js';
import { makePackage } from '../helpers/make-package.js';
import { startAirlock, type Running } from '../relay/helpers.js';
import { CHROMIUM, CHROMIUM_SERVICE_HOSTS, Sentinel, chromiumAvailable, launchBehindSentinel, proxyTarget } from './chromium.js';

/**
 * The deployment matrix: in air-gapped the served site makes no request to any
 * other origin — proved on an export full of third-party resources (web fonts, CDN stylesheets and
 * scripts, an embed, a badge, a consent banner, an absolute URL to the production origin: the
 * fixture's `thirdParty` trait) in Debian's Chromium. The browser's only way out is a proxy on
 * 127.0.0.1 standing in for the internet: every connection it sees left the page (preconnects
 * included, which no CSP governs). What the browser blocked is counted and must be exactly
 * third-party URLs the export references.
 */
const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const PRODUCTION = 'https://docs.example.com';
const EXPECTED_BLOCKED = new Set<string>([...THIRD_PARTY_ORIGINS, PRODUCTION]);

interface Seen {
  requests: string[];
  blocked: string[];
  aborted: string[];
  failedOther: string[];
  pageErrors: string[];
}

function watch(page: Page): Seen {
  const seen: Seen = { requests: [], blocked: [], aborted: [], failedOther: [], pageErrors: [] };
  page.on('request', (r) => seen.requests.push(r.url()));
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText ?? '';
    // ERR_ABORTED: the page navigated away while the request was in flight (a redirect stub)
    (why === 'csp' || why.includes('BLOCKED_BY_CSP') ? seen.blocked : why === 'net::ERR_ABORTED' ? seen.aborted : seen.failedOther).push(`${r.url()} ${why}`);
  });
  page.on('pageerror', (e) => seen.pageErrors.push(String(e)));
  return seen;
}

const originOf = (u: string) => (/^https?:/.test(u) ? new URL(u).origin : null);

let root: string;
let store: string;
let sentinel: Sentinel;
let browser: Browser;

beforeAll(async () => {
  expect(chromiumAvailable(), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`).toBe(true);
  await mkdir(ARTIFACTS, { recursive: true });
  root = await mkdtemp(join(tmpdir(), 'airlock-3p-'));
  const site = join(root, 'site');
  await generateSite(site, { pages: 20, seed: 21, bytesPerPage: 5000, traits: { thirdParty: true, redirectStubs: 40, pageNamedFolders: true, casePairs: 3 } });
  const { pkgPath } = await makePackage({ siteDir: site, outDir: join(root, 'pkg'), version: 'v3p' });
  store = join(root, 'store');
  await importPackage(pkgPath, { store, trust: [], allowUnsigned: true, activate: true });
  ({ sentinel, browser } = await launchBehindSentinel());
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await sentinel?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('third-party resources in a real browser', () => {
  it('control: served as cloud (analytics on, hints and embeds kept), the sentinel sees the page reach the internet', async () => {
    const cloud = await startAirlock(store, { deployment: 'cloud' });
    const ctx = await browser.newContext();
    try {
      const before = sentinel.asked.length;
      await (await ctx.newPage()).goto(cloud.origin + '/', { waitUntil: 'networkidle' });
      const hosts = sentinel.pagesAsked(before).map(proxyTarget);
      expect(hosts).toContain('www.googletagmanager.com'); // a script the cloud CSP admits
      // connections no request event shows: the iframe's, opened before frame-src refuses it
      expect(hosts).toContain('www.youtube-nocookie.com');
    } finally {
      await ctx.close();
      await cloud.close();
    }
  });

  it("air-gapped: nothing leaves the origin; what the browser blocks is only the export's third-party URLs", async () => {
    const air: Running = await startAirlock(store, { deployment: 'air-gapped' });
    const ctx = await browser.newContext();
    try {
      const page = await ctx.newPage();
      const seen = watch(page);
      const before = sentinel.asked.length;
      for (const path of ['/', '/getting-started', '/rules/A001/', '/rules/a001/']) {
        const res = await page.goto(air.origin + path, { waitUntil: 'networkidle' });
        expect(res?.status(), path).toBe(200);
        expect(await page.locator('main h1').isVisible(), `${path}: the page renders`).toBe(true);
        // widgets and the consent banner are gone from the DOM, not just hidden
        for (const sel of ['#search-bar', '#assistant-widget', '#ot-sdk-btn']) expect(await page.locator(sel).count(), `${path}: ${sel}`).toBe(0);
      }
      await page.screenshot({ path: `${ARTIFACTS}browser-third-party-air-gapped.png`, fullPage: true });
      // the product-tour embed is a link to the video now (an iframe would have connected before frame-src refused it)
      await page.goto(air.origin + '/', { waitUntil: 'networkidle' });
      expect(await page.locator('a[data-airlock="embed-link"]').count()).toBe(1);
      expect(await page.locator('a[data-airlock="embed-link"]').getAttribute('href')).toBe('https://www.youtube.com/watch?v=aqz-KE-bpKQ');
      expect(await page.locator('a[data-airlock="embed-link"]').innerText()).toBe('Product tour');
      expect(await page.locator('iframe').count()).toBe(0);
      // a redirect stub (meta refresh + inline script, under the page's CSP) lands on its page
      await page.goto(air.origin + '/archive/v1/getting-started.html', { waitUntil: 'networkidle' });
      await page.waitForURL(`${air.origin}/getting-started/`, { timeout: 10_000 });

      expect(sentinel.pagesAsked(before), 'connections that left the page').toEqual([]);
      const offOrigin = seen.requests.filter((u) => originOf(u) !== null && originOf(u) !== air.origin);
      const blockedOrigins = new Set(seen.blocked.map((b) => originOf(b.split(' ')[0]!)));
      // every off-origin request the page attempted was blocked by the browser, and only those
      expect(offOrigin.length).toBe(seen.blocked.length);
      expect([...blockedOrigins].filter((o) => !EXPECTED_BLOCKED.has(o!))).toEqual([]);
      for (const o of ['https://fonts.googleapis.com', 'https://cdnjs.cloudflare.com', 'https://img.shields.io', PRODUCTION])
        expect(blockedOrigins.has(o), o).toBe(true);
      // removed from the HTML, so never even attempted: analytics, the consent manager, preconnects
      for (const host of ['googletagmanager.com', 'posthog.com', 'cookielaw.org'])
        expect(
          seen.requests.filter((u) => u.includes(host)),
          host,
        ).toEqual([]);
      expect(seen.failedOther).toEqual([]);
      // only the redirect stub's deferred search dialog script, cut short when the stub navigates at once
      for (const a of seen.aborted) expect(a.startsWith(`${air.origin}/_airlock/search.js `), a).toBe(true);
      expect(seen.pageErrors).toEqual([]);
      const report = {
        blocked: seen.blocked.length,
        origins: [...blockedOrigins].sort(),
        leftTheOrigin: sentinel.pagesAsked(before).length,
        chromiumOwnBackground: sentinel.asked
          .slice(before)
          .map(proxyTarget)
          .filter((h) => CHROMIUM_SERVICE_HOSTS.includes(h)),
      };
      await writeFile(`${ARTIFACTS}third-party-air-gapped.json`, JSON.stringify(report, null, 2) + '\n');
      process.stderr.write(
        `third-party (air-gapped): ${report.blocked} requests blocked by the browser, ${report.leftTheOrigin} left the origin; blocked origins: ${report.origins.join(', ')}\n`,
      );
    } finally {
      await ctx.close();
      await air.close();
    }
  });
});
