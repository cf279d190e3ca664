import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { resolveFeatures } from '../../src/features/index.js';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { featureOptions } from '../../src/serve/features.js';
import { importPackage } from '../../src/store/index.js';
import { makePackage } from '../helpers/make-package.js';
import { fixtureStore } from '../relay/helpers.js';
import { CHROMIUM, chromiumAvailable, launch, record } from './chromium.js';
import { cleanupAfterEach } from '../helpers/scope.js';

/**
 * Local search in Debian's Chromium: on the air-gapped fixture site a reader opens the injected search
 * dialog (keyboard), types a query, gets ranked results with snippets, picks one with the arrow
 * keys and Enter, and lands on the page at the right section; no request leaves the origin and
 * the page's CSP is never violated. With `--disable local-search` there is no search UI at all.
 */
let fx: Awaited<ReturnType<typeof fixtureStore>>;
let browser: Browser;
const cleanups = cleanupAfterEach();

async function serve(disable: string[] = [], store = fx.store): Promise<string> {
  const resolved = resolveFeatures({ deployment: 'air-gapped', disable });
  const srv: AirlockServer = await createAirlockServer({ store, lease: false, log: () => {}, ...featureOptions(resolved, null, { log: () => {} }) });
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
    // Typed key by key, a slow machine may answer a prefix of the query first: wait for the whole query's answer.
    await expect.poll(() => options.first().locator('.airlock-search-heading').textContent(), { timeout: 20_000 }).toBe('Webhooks: step 3');
    expect(await options.count()).toBeGreaterThan(1);
    expect(await options.first().locator('.airlock-search-title').textContent()).toBe('Secure webhooks - Docs');
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
    expect(
      await page.locator('#section-3').evaluate((el) => {
        const r = el.getBoundingClientRect();
        return r.top >= 0 && r.top < window.innerHeight;
      }),
    ).toBe(true);

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

/**
 * A site published in three languages and three versions, as multilingual doc sites are: a guide
 * page whose name is the word a reader types, and an API-reference page that repeats that word
 * many times in every copy.
 */
function page(lang: string, title: string, body: string): string {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>${title}</title></head><body><nav><a href="/">Home</a></nav><main><h1>${title}</h1>${body}</main></body></html>`;
}
const GUIDE: Record<string, [string, string]> = {
  en: ['Handoffs', '<p>Handoffs let an agent delegate a task to another agent.</p><h2 id="setup">Set up handoffs</h2><p>Pass the agents to hand off to.</p>'],
  ja: ['ハンドオフ', '<p>ハンドオフ (handoffs) はエージェントがタスクを別のエージェントに委任する仕組みです。</p>'],
  zh: ['交接', '<p>交接 (handoffs) 让智能体把任务委托给另一个智能体。</p>'],
};
const API = (lang: string) =>
  page(
    lang,
    'Agent API reference',
    `<p>${'handoffs: list of agents for handoffs; handoffs description. '.repeat(12)}</p><h2 id="params">Parameters</h2><p>name, instructions, tools, handoffs.</p>`,
  );
function multilingualSite(): Record<string, string> {
  const files: Record<string, string> = { 'index.html': page('en', 'Docs', '<p>Welcome.</p>'), 'favicon.ico': 'icon' };
  for (const lang of ['en', 'ja', 'zh']) {
    const prefix = lang === 'en' ? '' : `${lang}/`;
    for (const version of ['latest/', 'dev/', '']) {
      files[`${prefix}${version}guide/handoffs/index.html`] = page(lang, GUIDE[lang]![0], GUIDE[lang]![1]);
      files[`${prefix}${version}api/agent/index.html`] = API(lang);
      files[`${prefix}${version}index.html`] = page(lang, `Docs (${lang})`, '<p>Start here.</p>');
    }
  }
  return files;
}

describe('local search on a multilingual, versioned site (air-gapped, in Chromium)', () => {
  let root: string;
  let store: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'airlock-search-ml-'));
    const site = join(root, 'site');
    for (const [p, body] of Object.entries(multilingualSite())) {
      await mkdir(dirname(join(site, p)), { recursive: true });
      await writeFile(join(site, p), body);
    }
    const { pkgPath } = await makePackage({ siteDir: site, outDir: join(root, 'pkg'), version: 'v1' });
    store = join(root, 'store');
    await importPackage(pkgPath, { store, trust: [], allowUnsigned: true, activate: true });
  }, 60_000);
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** Results a reader sees after typing `query` on `from`: their links, in order. */
  async function resultsOn(origin: string, from: string, query: string): Promise<string[]> {
    const page = await newPage();
    const rec = record(page);
    await page.goto(origin + from, { waitUntil: 'networkidle' });
    await page.keyboard.press('/');
    const dialog = page.getByRole('dialog', { name: 'Search the documentation' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('combobox').fill(query); // one input event: one search, no answer to a prefix
    const options = dialog.getByRole('option');
    await expect.poll(() => options.count(), { timeout: 20_000 }).toBeGreaterThan(1);
    const hrefs = await options.evaluateAll((els) => els.map((e) => (e.querySelector('a') ?? e).getAttribute('href') ?? e.getAttribute('data-href') ?? ''));
    expect(rec.requests.filter((u) => originOf(u) !== null && originOf(u) !== origin)).toEqual([]);
    expect(rec.pageErrors).toEqual([]);
    return hrefs.map((h) => new URL(h, origin).pathname);
  }

  it("the guide named by the word comes first, in the reader's language and version, one result per page", async () => {
    const origin = await serve([], store);
    const en = await resultsOn(origin, '/latest/', 'handoffs');
    expect(en[0]).toBe('/latest/guide/handoffs/');
    expect(en).toContain('/latest/api/agent/');
    // copies in other languages and versions are folded into the reader's copy
    expect(en.filter((p) => /^\/(ja|zh|dev)\//.test(p) || !p.startsWith('/latest/'))).toEqual([]);
    expect(new Set(en).size).toBe(en.length);

    const ja = await resultsOn(origin, '/ja/dev/', 'handoffs');
    expect(ja[0]).toBe('/ja/dev/guide/handoffs/');
    expect(ja.every((p) => p.startsWith('/ja/dev/'))).toBe(true);
  });
});
