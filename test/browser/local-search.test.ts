import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { resolveFeatures } from '../../src/features/index.js';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { featureOptions } from '../../src/serve/features.js';
import { fixtureStore } from '../relay/helpers.js';
import { CHROMIUM, chromiumAvailable, launch, record } from './chromium.js';

/**
 * Local search in Debian's Chromium: on the air-gapped fixture site a reader opens the injected search
 * dialog (keyboard), types a query, gets ranked results with snippets, picks one with the arrow
 * keys and Enter, and lands on the page at the right section; no request leaves the origin and
 * the page's CSP is never violated. With `--disable local-search` there is no search UI at all.
 */
let fx: Awaited<ReturnType<typeof fixtureStore>>;
let browser: Browser;
const cleanups: Array<() => Promise<void>> = [];

async function serve(disable: string[] = []): Promise<string> {
  const resolved = resolveFeatures({ deployment: 'air-gapped', disable });
  const srv: AirlockServer = await createAirlockServer({ store: fx.store, lease: false, log: () => {}, ...featureOptions(resolved, null, { log: () => {} }) });
  cleanups.push(() => srv.close(1000));
  return (await srv.listen(0, '127.0.0.1')).replace(/\/$/, '');
}

async function newPage(): Promise<Page> {
  const ctx: BrowserContext = await browser.newContext();
  cleanups.push(() => ctx.close());
  await ctx.addInitScript(() => {
    const w = window as unknown as { __violations: string[] };
    w.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  return ctx.newPage();
}

beforeAll(async () => {
  expect(chromiumAvailable(), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`).toBe(true);
  fx = await fixtureStore();
  browser = await launch();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  await browser?.close();
  await fx?.cleanup();
});

const originOf = (u: string) => (u.startsWith('data:') || u.startsWith('about:') ? null : new URL(u).origin);

describe('local search in a real browser (air-gapped)', () => {
  it('type a query, ranked results with snippets, Enter opens the page at the section; nothing leaves the origin', async () => {
    const origin = await serve();
    const page = await newPage();
    const rec = record(page);
    await page.goto(origin + '/getting-started/', { waitUntil: 'networkidle' });
    const trigger = page.locator('button.airlock-search-trigger');
    await expect.poll(() => trigger.isVisible()).toBe(true);

    await page.keyboard.press('/'); // the shortcut opens the dialog with the field focused
    const dialog = page.getByRole('dialog', { name: 'Search the documentation' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    const input = dialog.getByRole('combobox', { name: 'Search the documentation' });
    expect(await input.evaluate((el) => el === document.activeElement)).toBe(true);
    await input.pressSequentially('webhooks step 3', { delay: 20 });

    const options = dialog.getByRole('option');
    await expect.poll(() => options.count(), { timeout: 20_000 }).toBeGreaterThan(1);
    expect(await options.first().locator('.airlock-search-title').textContent()).toBe('Secure webhooks - Docs');
    expect(await options.first().locator('.airlock-search-heading').textContent()).toBe('Webhooks: step 3');
    expect(await options.first().locator('.airlock-search-snippet mark').count()).toBeGreaterThan(0);
    expect(await dialog.getByRole('status').textContent()).toMatch(/^\d+ results?$/);
    expect(await options.first().getAttribute('aria-selected')).toBe('true');
    // arrow keys move the selection (and wrap back); Enter opens the selected result
    await input.press('ArrowDown');
    expect(await options.nth(1).getAttribute('aria-selected')).toBe('true');
    await input.press('ArrowUp');
    expect(await options.first().getAttribute('aria-selected')).toBe('true');
    await Promise.all([page.waitForURL(/\/api-reference\/secure-webhooks#section-3$/), input.press('Enter')]);
    await page.waitForLoadState('networkidle');
    expect(new URL(page.url()).hash).toBe('#section-3');
    expect(await page.locator('#section-3').textContent()).toBe('Webhooks: step 3');
    // the section is what the reader sees: scrolled into the viewport
    expect(await page.locator('#section-3').evaluate((el) => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < window.innerHeight; })).toBe(true);

    // Ctrl+K opens it too, and Escape closes it
    await page.keyboard.press('Control+k');
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(false);

    const offOrigin = rec.requests.filter((u) => originOf(u) !== null && originOf(u) !== origin);
    expect(offOrigin).toEqual([]);
    expect(rec.requests.some((u) => u === `${origin}/_airlock/search/docs.example.com`)).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(rec.pageErrors).toEqual([]);
  });

  it('with --disable local-search the search UI is gone', async () => {
    const origin = await serve(['local-search']);
    const page = await newPage();
    const rec = record(page);
    await page.goto(origin + '/getting-started/', { waitUntil: 'networkidle' });
    expect(await page.locator('button.airlock-search-trigger').count()).toBe(0);
    await page.keyboard.press('/');
    await page.keyboard.press('Control+k');
    expect(await page.locator('dialog').count()).toBe(0);
    expect(await page.locator('script[src="/_airlock/search.js"]').count()).toBe(0);
    expect(rec.requests.filter((u) => u.includes('/_airlock/search'))).toEqual([]);
    expect(await page.locator('main h1').isVisible()).toBe(true);
  });
});
