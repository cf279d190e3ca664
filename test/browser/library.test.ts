import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { resolveFeatures } from '../../src/features/index.js';
import { createLibraryServer, type LibraryServer } from '../../src/serve/library.js';
import { featureOptions } from '../../src/serve/features.js';
import { cleanup, setActive, tempRoot, writeVersion } from '../serve/helpers.js';
import { CHROMIUM, chromiumAvailable, launch, record, violations, watchedPage } from './chromium.js';
import { cleanupAfterEach } from '../helpers/scope.js';
import { until } from '../helpers/wait.js';

/**
 * The library's landing page in Debian's Chromium: a reader searches every site from the keyboard
 * alone, gets results grouped by site, and opens one; nothing is asked of another origin and the
 * page's CSP is never violated.
 */
let root: string;
let browser: Browser;
let srv: LibraryServer;
let origin: string;

const pages = (name: string, word: string) => ({
  'index.html': `<!doctype html><html lang="en"><head><title>${name} docs</title></head><body><h1>${name}</h1><p>Welcome to ${name}.</p></body></html>`,
  'install.html': `<!doctype html><html lang="en"><head><title>Install ${name}</title></head><body><h1 id="steps">Installing ${name}</h1><p>To install ${name}, copy the ${word} files.</p></body></html>`,
});

beforeAll(async () => {
  expect(chromiumAvailable(), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`).toBe(true);
  root = await tempRoot('airlock-library-browser-');
  const lib = join(root, 'lib');
  for (const [d, word] of [
    ['alpha.example', 'turbine'],
    ['beta.example', 'turbine'],
    ['gamma.example', 'gearbox'],
  ] as const) {
    await writeVersion(join(lib, d), 'v1', pages(d.split('.')[0]!, word), { domain: d });
    await setActive(join(lib, d), 'v1');
  }
  srv = await createLibraryServer({
    library: lib,
    siteOptions: () => ({
      lease: false,
      log: () => {},
      ...featureOptions(resolveFeatures({ deployment: 'air-gapped' }), null, { log: () => {}, searchOnDemand: true }),
    }),
    log: () => {},
    pollMs: 3_600_000,
  });
  origin = (await srv.listen()).replace(/\/$/, '');
  // Every site's index built before the reader comes (on a loaded machine a first search may list sites as still preparing).
  await until(
    async () => {
      const r = await fetch(origin + '/_airlock/library/search', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"install"}',
      });
      return ((await r.json()) as { pending: unknown[] }).pending.length === 0;
    },
    { timeoutMs: 30_000 },
  );
  browser = await launch();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await srv?.close(1000);
  await cleanup(root);
});

const originOf = (u: string) => (u.startsWith('data:') || u.startsWith('about:') ? null : new URL(u).origin);

const cleanups = cleanupAfterEach();
const newPage = async () => (await watchedPage(browser, cleanups)).page;

describe('the library landing page in a real browser', () => {
  it('search every site from the keyboard: results grouped by site, Enter opens one; nothing leaves the origin', async () => {
    const page = await newPage();
    const rec = record(page);
    await page.goto(origin + '/', { waitUntil: 'networkidle' });
    expect(await page.getByRole('search').count()).toBe(1);
    await page.keyboard.press('Tab'); // the first thing a keyboard reaches is the search field
    const field = page.getByRole('searchbox', { name: 'Search the documentation' });
    expect(await field.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type('turbine');
    await Promise.all([page.waitForURL(/\/\?q=turbine/), page.keyboard.press('Enter')]);
    await page.waitForLoadState('networkidle');

    const groups = page.locator('section.site-hits');
    expect(await groups.count()).toBe(2);
    expect((await groups.locator('h3 bdi').allTextContents()).sort()).toEqual(['alpha docs', 'beta docs']);
    expect(await page.getByRole('heading', { level: 2, name: /results? for “turbine” in 2 sites/ }).count()).toBe(1);
    expect(await groups.first().locator('mark').count()).toBeGreaterThan(0);
    expect(await page.getByText('Not searched').count()).toBe(0);

    // From the field, Tab goes through the site choice and the button to the first group's site link, then its first result.
    const first = groups.first().locator('ol a').first();
    const href = (await first.getAttribute('href'))!;
    expect(href).toMatch(/^\/(alpha|beta)\.example\/install(#steps)?$/);
    for (let i = 0; i < 6 && !(await first.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab');
    expect(await first.evaluate((el) => el === document.activeElement)).toBe(true);
    await Promise.all([page.waitForURL(new RegExp(`${href.replace(/[.#]/g, '\\$&')}$`)), page.keyboard.press('Enter')]);
    await page.waitForLoadState('networkidle');
    expect(await page.locator('h1').textContent()).toMatch(/^Installing (alpha|beta)$/);

    const offOrigin = rec.requests.filter((u) => originOf(u) !== null && originOf(u) !== origin);
    expect(offOrigin).toEqual([]);
    expect(await violations(page)).toEqual([]);
    expect(rec.pageErrors).toEqual([]);
  }, 60_000);

  it('the site choice narrows the search to one site', async () => {
    const page = await newPage();
    await page.goto(origin + '/', { waitUntil: 'networkidle' });
    await page.getByRole('searchbox').fill('install');
    await page.getByRole('combobox', { name: 'In' }).selectOption('gamma.example');
    await Promise.all([page.waitForURL(/site=gamma\.example/), page.getByRole('searchbox').press('Enter')]);
    expect(await page.locator('section.site-hits h3 .domain').allTextContents()).toEqual(['gamma.example']);
  }, 60_000);
});
