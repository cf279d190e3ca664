import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { fixtureStore, startAirlock, type Running } from '../relay/helpers.js';
import { resolveFeatures } from '../../src/features/index.js';
import { featureOptions } from '../../src/serve/features.js';
import { createAirlockServer } from '../../src/serve/index.js';
import { localAssistantFor } from '../../src/assistant/route.js';
import { CHROMIUM, chromiumAvailable, launch, record, violations, watchedPage } from './chromium.js';
import { cleanupAfterEach } from '../helpers/scope.js';

/**
 * The deployment matrix, proved in Debian's Chromium: the fixture site (GA +
 * PostHog tags, search and assistant widgets) served air-gapped makes no request off its origin,
 * and client-hosted with analytics + assistant loads the analytics tag and streams an answer
 * through the relay. Nothing leaves the machine: off-origin requests are answered by page.route.
 */
const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const PAGES = ['/', '/getting-started/configure-localization', '/getting-started/', '/api-reference/secure-webhooks'];

let fx: Awaited<ReturnType<typeof fixtureStore>>;
let browser: Browser;
const cleanups = cleanupAfterEach();

beforeAll(async () => {
  // Never skipped: a missing browser is a failure that says how to install it.
  expect(chromiumAvailable(), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`).toBe(true);
  await mkdir(ARTIFACTS, { recursive: true });
  fx = await fixtureStore();
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await fx?.cleanup();
});

const openContext = () => watchedPage(browser, cleanups);

const originOf = (u: string) => (u.startsWith('data:') || u.startsWith('about:') ? null : new URL(u).origin);

describe('air-gapped in a real browser', () => {
  let air: Running;
  beforeAll(async () => {
    air = await startAirlock(fx.store, { deployment: 'air-gapped' });
  });
  afterAll(async () => {
    await air?.close();
  });

  it('no request leaves the origin, no console errors, widgets hidden, flags match /_airlock/features', async () => {
    const { page } = await openContext();
    const rec = record(page);
    const features = await (await fetch(`${air.origin}/_airlock/features`)).json();
    for (const path of PAGES) {
      const res = await page.goto(air.origin + path, { waitUntil: 'networkidle' });
      expect(res?.status(), path).toBe(200);
      expect(await page.evaluate(() => (window as unknown as { __AIRLOCK_FEATURES__: unknown }).__AIRLOCK_FEATURES__), path).toEqual(features);
      expect(await page.locator('#search-bar').isVisible(), `${path}: search widget`).toBe(false);
      expect(await page.locator('#assistant-widget').isVisible(), `${path}: assistant widget`).toBe(false);
      expect(await violations(page), `${path}: CSP violations`).toEqual([]);
      expect(await page.locator('main h1').isVisible(), `${path}: the page itself renders`).toBe(true);
    }
    await page.goto(air.origin + '/', { waitUntil: 'networkidle' });
    await page.screenshot({ path: `${ARTIFACTS}browser-air-gapped.png`, fullPage: true });

    const offOrigin = rec.requests.filter((u) => originOf(u) !== null && originOf(u) !== air.origin);
    expect(offOrigin).toEqual([]);
    expect(rec.requests.filter((u) => u.startsWith(air.origin)).length).toBeGreaterThan(PAGES.length * 5); // pages + their assets were recorded
    expect(rec.consoleErrors).toEqual([]);
    expect(rec.pageErrors).toEqual([]);
    expect(features).toEqual({
      deployment: 'air-gapped',
      features: { search: false, assistant: false, analytics: false, apiPlayground: false, staticExport: true, localSearch: true, localAssistant: false },
    });
  });
});

describe('client-hosted with analytics and assistant (relayed to the emulator) in a real browser', () => {
  let air: Running;
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ streamDelayMs: 25 });
    air = await startAirlock(fx.store, { deployment: 'client-hosted', enable: ['analytics', 'assistant'] }, { upstreamUrl: emu.url, key: emu.keys.assistant });
  });
  afterAll(async () => {
    await air?.close();
    await emu?.close();
  });

  it('requests the analytics tag, shows the assistant and streams its answer into the page', async () => {
    const { ctx, page } = await openContext();
    const rec = record(page);
    // No internet here, and none wanted: every off-origin request is answered locally with a stub.
    const stubbed: string[] = [];
    await ctx.route(
      (u) => u.origin !== air.origin,
      (route) => {
        stubbed.push(route.request().url());
        return route.fulfill({ status: 200, contentType: 'application/javascript', body: '/* stub */' });
      },
    );
    const res = await page.goto(air.origin + '/getting-started/configure-localization', { waitUntil: 'networkidle' });
    expect(res?.status()).toBe(200);
    expect(rec.requests.some((u) => u.startsWith('https://www.googletagmanager.com/gtag/js'))).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { __AIRLOCK_FEATURES__: unknown }).__AIRLOCK_FEATURES__)).toEqual(
      await (await fetch(`${air.origin}/_airlock/features`)).json(),
    );
    expect(await page.locator('meta[name="docs-api-base"]').getAttribute('content')).toBe('/');
    expect(await page.locator('#assistant-widget').isVisible()).toBe(true);
    expect(await page.locator('#search-bar').isVisible()).toBe(false);

    await page.locator('[data-assistant-input]').fill('How do I configure localization?');
    await page.locator('#assistant-widget button[type="submit"]').click();
    const answer = page.locator('[data-assistant-answer]');
    // Observe the answer as it grows: a buffered relay would show it all at once.
    const lengths: number[] = [];
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const [len, state] = await page.evaluate(() => {
        const w = document.getElementById('assistant-widget')!;
        return [w.querySelector('[data-assistant-answer]')!.textContent!.length, w.getAttribute('data-state')] as const;
      });
      if (len > 0 && lengths.at(-1) !== len) lengths.push(len);
      if (state === 'done' || state === 'error') break;
      await page.waitForTimeout(30);
    }
    expect(await page.locator('#assistant-widget').getAttribute('data-state')).toBe('done');
    expect(lengths.length, `answer lengths seen: ${lengths.join(',')}`).toBeGreaterThanOrEqual(3);
    expect(lengths.at(-1)!).toBeGreaterThan(lengths[0]!);
    expect((await answer.textContent())!.length).toBeGreaterThan(20);
    expect(await page.locator('[data-assistant-sources] a').count()).toBeGreaterThan(0);
    await page.screenshot({ path: `${ARTIFACTS}browser-client-hosted.png`, fullPage: true });

    // The browser talked to its own origin (the relay) only; the relay called the emulator once.
    const assistantCalls = rec.requests.filter((u) => u.includes('/discovery/v2/assistant/'));
    expect(assistantCalls).toEqual([`${air.origin}/discovery/v2/assistant/docs.example.com/message`]);
    expect(emu.state.apiRequests.filter((r) => r.path.startsWith('/discovery/v2/assistant/'))).toHaveLength(1);
    const offOrigin = rec.requests.filter((u) => originOf(u) !== null && originOf(u) !== air.origin);
    expect(offOrigin.length).toBeGreaterThan(0);
    expect(offOrigin.every((u) => stubbed.includes(u))).toBe(true);
    expect(rec.pageErrors).toEqual([]);
    expect(await violations(page)).toEqual([]);
  });
});

describe("air-gapped with local-assistant (the emulator's stand-in model) in a real browser", () => {
  let air: Running;
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator();
    const resolved = resolveFeatures({ deployment: 'air-gapped', enable: ['local-assistant'] });
    const assistant = localAssistantFor({ model: { url: `${emu.url}/v1`, name: 'stand-in', key: null } });
    const srv = await createAirlockServer({ store: fx.store, lease: false, log: () => {}, ...featureOptions(resolved, null, { assistant }) });
    const url = await srv.listen(0, '127.0.0.1');
    air = { url, origin: url.replace(/\/$/, ''), srv, relay: null, resolved, close: () => srv.close(1000) };
  });
  afterAll(async () => {
    await air?.close();
    await emu?.close();
  });

  it("the export's own assistant widget answers from the site's pages; the page talks to its own origin only", async () => {
    const { page } = await openContext();
    const rec = record(page);
    const res = await page.goto(air.origin + '/getting-started/configure-localization', { waitUntil: 'networkidle' });
    expect(res?.status()).toBe(200);
    expect(await page.locator('meta[name="docs-api-base"]').getAttribute('content')).toBe('/');
    expect(await page.locator('#assistant-widget').isVisible()).toBe(true);
    expect(await page.locator('#search-bar').isVisible()).toBe(false); // the service's search stays unavailable
    const ask = async () => {
      await page.locator('[data-assistant-input]').fill('How do I configure localization?');
      await page.locator('#assistant-widget button[type="submit"]').click();
      await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('assistant-widget')!.getAttribute('data-state') ?? ''), null, {
        timeout: 15_000,
      });
    };
    // The first question may arrive while the site's search index is still being built (503, said in the widget): asked again once it is.
    for (let i = 0; i < 20; i++) {
      await ask();
      if ((await page.locator('#assistant-widget').getAttribute('data-state')) === 'done') break;
      await page.waitForTimeout(500);
    }
    expect(await page.locator('#assistant-widget').getAttribute('data-state')).toBe('done');
    expect(await page.locator('[data-assistant-answer]').textContent()).toMatch(/According to \[1\] /);
    expect(await page.locator('[data-assistant-sources] a').count()).toBeGreaterThan(0);
    await page.screenshot({ path: `${ARTIFACTS}browser-local-assistant.png`, fullPage: true });
    expect(rec.requests.filter((u) => originOf(u) !== null && originOf(u) !== air.origin)).toEqual([]);
    expect(
      rec.requests.filter((u) => u.includes('/discovery/v2/assistant/')).every((u) => u === `${air.origin}/discovery/v2/assistant/docs.example.com/message`),
    ).toBe(true);
    expect(rec.pageErrors).toEqual([]);
    expect(await violations(page)).toEqual([]);
  });
});
