import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { resolveFeatures } from '../../src/features/index.js';
import { createAirlockServer } from '../../src/serve/index.js';
import { featureOptions } from '../../src/serve/features.js';
import { localAssistantFor } from '../../src/assistant/route.js';
import { importPackage } from '../../src/store/index.js';
import { makePackage } from '../helpers/make-package.js';
import { fixtureStore } from '../relay/helpers.js';
import { CHROMIUM, chromiumAvailable, launch, record, violations, watchedPage } from './chromium.js';
import { cleanupAfterEach } from '../helpers/scope.js';

/**
 * local-assistant's own panel in Debian's Chromium, on a site exported WITHOUT an assistant widget:
 * a reader opens it with the keyboard, asks, sees the answer of the emulator's stand-in model
 * stream in and its source as a link of this origin, and asks a follow-up in the same thread. The
 * stand-in quotes the page's first sentence, which here holds markup and a link to another origin:
 * neither becomes an element. Refusals (429, a broken-off stream) are said in words. No request
 * leaves the origin and the page's CSP is never violated. On the fixture site, which has its own
 * assistant widget, the panel stays away.
 */
const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
let browser: Browser;
let emu: RunningEmulator;
let root: string;
let store: string;
const cleanups = cleanupAfterEach();

const HOSTILE =
  'Rotate tokens with &lt;img src=x onerror="window.__pwned=1"&gt; and **care**, after `airlock keygen`, see [the setup guide](/guide/setup/) or [this page](http://evil.example/steal) first.';
function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><nav><a href="/">Home</a></nav><main><h1>${title}</h1>${body}</main></body></html>`;
}
const SITE: Record<string, string> = {
  'index.html': page('Docs', '<p>Welcome to the documentation.</p>'),
  'guide/setup/index.html': page('Setup guide', '<p>Install the server on one machine, then import a package.</p>'),
  'guide/tokens/index.html': page('Rotating tokens', `<p>${HOSTILE}</p><h2 id="schedule">Schedule</h2><p>It happens every 90 days.</p>`),
  // a page whose own code adds the export's assistant widget after the panel's script ran
  'guide/late/index.html': page('Late widget', '<p>A widget arrives later.</p><script src="/late.js" defer></script>'),
  'late.js': "document.body.appendChild(Object.assign(document.createElement('div'), { id: 'assistant-widget', textContent: 'the export widget' }));",
  'guide/later/index.html': page('Lazy widget', '<p>A widget arrives after load.</p><script src="/later.js" defer></script>'),
  'later.js':
    "window.addEventListener('load', () => setTimeout(() => document.body.appendChild(Object.assign(document.createElement('div'), { id: 'assistant-widget', textContent: 'the lazy widget' })), 300));",
  'favicon.ico': 'icon',
};

async function serve(storePath: string): Promise<string> {
  const resolved = resolveFeatures({ deployment: 'air-gapped', enable: ['local-assistant'] });
  const assistant = localAssistantFor({ model: { url: `${emu.url}/v1`, name: 'stand-in', key: null } });
  const srv = await createAirlockServer({ store: storePath, lease: false, log: () => {}, ...featureOptions(resolved, null, { log: () => {}, assistant }) });
  cleanups.push(() => srv.close(1000));
  return (await srv.listen(0, '127.0.0.1')).replace(/\/$/, '');
}

const newPage = async () => (await watchedPage(browser, cleanups)).page;

/** Tab from the top of the page to the panel's button, as a keyboard reader does, and press Enter. */
async function openWithKeyboard(p: Page): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await p.keyboard.press('Tab');
    if (await p.evaluate(() => document.activeElement?.classList.contains('airlock-assistant-trigger'))) break;
  }
  expect(await p.evaluate(() => document.activeElement?.textContent)).toBe('Ask');
  await p.keyboard.press('Enter');
}

beforeAll(async () => {
  expect(chromiumAvailable(), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`).toBe(true);
  await mkdir(ARTIFACTS, { recursive: true });
  emu = await startEmulator();
  root = await mkdtemp(join(tmpdir(), 'airlock-panel-'));
  const site = join(root, 'site');
  for (const [p, body] of Object.entries(SITE)) {
    await mkdir(dirname(join(site, p)), { recursive: true });
    await writeFile(join(site, p), body);
  }
  const { pkgPath } = await makePackage({ siteDir: site, outDir: join(root, 'pkg'), version: 'v1' });
  store = join(root, 'store');
  await importPackage(pkgPath, { store, trust: [], allowUnsigned: true, activate: true });
  browser = await launch();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await emu?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const originOf = (u: string) => (u.startsWith('data:') || u.startsWith('about:') ? null : new URL(u).origin);

describe("local-assistant's panel on a site without an assistant widget (air-gapped, in Chromium)", () => {
  it('opened with the keyboard, answers as it streams with same-origin sources and links only, and continues the thread', async () => {
    const origin = await serve(store);
    const p = await newPage();
    const rec = record(p);
    const bodies: string[] = [];
    p.on('request', (r) => void (r.url().includes('/discovery/v2/assistant/') && bodies.push(r.postData() ?? '')));
    await p.goto(origin + '/guide/setup/', { waitUntil: 'networkidle' });
    expect(await p.locator('#assistant-widget').count()).toBe(0);
    await expect.poll(() => p.getByRole('button', { name: 'Ask' }).isVisible()).toBe(true);
    expect(await p.locator('button.airlock-search-trigger').isVisible()).toBe(true); // local search's button, beside it
    const [ask, search] = await Promise.all(['.airlock-assistant-trigger', '.airlock-search-trigger'].map((s) => p.locator(s).boundingBox()));
    expect(ask!.x + ask!.width).toBeLessThanOrEqual(search!.x);

    await openWithKeyboard(p);
    const dialog = p.getByRole('dialog', { name: 'Ask the documentation' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    const input = dialog.getByRole('textbox', { name: 'Your question' });
    expect(await input.evaluate((el) => el === document.activeElement)).toBe(true);
    await p.keyboard.type('How do I rotate tokens?');
    await p.keyboard.press('Enter');

    const log = dialog.getByRole('log');
    expect(await log.getAttribute('aria-live')).toBe('polite');
    const answer = log.locator('.airlock-assistant-answer').first();
    await expect.poll(() => answer.getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false');
    const text = (await answer.textContent()) ?? '';
    expect(text).toMatch(/^According to \[1\] Rotating tokens: Rotate tokens with /);
    // the model's markup is text, its link to another origin is text; inline code and bold are rendered
    expect(text).toContain('<img src=x onerror="window.__pwned=1">');
    expect(text).toContain('this page (http://evil.example/steal)');
    expect(await dialog.locator('img').count()).toBe(0);
    expect(await p.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await answer.locator('code').first().textContent()).toBe('airlock keygen');
    expect(await answer.locator('strong').first().textContent()).toBe('care');
    const hrefs = await dialog.locator('a').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
    expect(hrefs).toContain(`${origin}/guide/setup/`);
    expect(hrefs.filter((h) => new URL(h).origin !== origin)).toEqual([]);
    const sources = dialog.getByRole('list', { name: 'Sources' }).getByRole('link');
    expect(await sources.first().getAttribute('href')).toBe(`${origin}/guide/tokens/`);
    expect(await sources.first().textContent()).toBe('Rotating tokens');

    // a follow-up continues the thread the answer's finish part named
    await p.keyboard.type('And how often?');
    await p.keyboard.press('Enter');
    const second = log.locator('.airlock-assistant-answer').nth(1);
    await expect.poll(() => second.getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false');
    expect(await second.textContent()).toMatch(/^Following up \(turn 2\): /);
    const sent = bodies.map((b) => JSON.parse(b) as { fp: string; threadId?: string; currentPath: string });
    expect(sent.at(-1)!.threadId).toMatch(/\S/);
    expect(sent[0]!.threadId).toBeUndefined();
    expect(sent[0]!.currentPath).toBe('/guide/setup/');
    expect(new Set(sent.map((b) => b.fp)).size).toBe(1);

    await p.screenshot({ path: `${ARTIFACTS}browser-assistant-panel.png` });
    await p.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await p.evaluate(() => document.activeElement?.textContent)).toBe('Ask');
    expect(rec.requests.filter((u) => originOf(u) !== null && originOf(u) !== origin)).toEqual([]);
    expect(
      rec.requests.filter((u) => u.includes('/discovery/v2/assistant/')).every((u) => u === `${origin}/discovery/v2/assistant/docs.example.com/message`),
    ).toBe(true);
    expect(rec.pageErrors).toEqual([]);
    expect(await violations(p)).toEqual([]);
  });

  it('says refusals and a broken-off answer in words; lists and fenced code render as elements, hostile ones as text', async () => {
    const origin = await serve(store);
    const p = await newPage();
    const rec = record(p);
    const answers: Array<{ status: number; headers: Record<string, string>; body: string }> = [
      { status: 429, headers: { 'retry-after': '120', 'content-type': 'application/json' }, body: JSON.stringify({ error: 'rate limit reached' }) },
      {
        status: 503,
        headers: { 'retry-after': '30', 'content-type': 'application/json' },
        body: JSON.stringify({ error: 'the assistant is unavailable now: the model server did not answer' }),
      },
      {
        status: 200,
        headers: { 'content-type': 'text/event-stream; charset=utf-8' },
        body: [
          { type: 'start' },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Steps:\n\n- one [x](javascript:window.__pwned=1)\n- two <b>bold</b>\n\n```sh\n<script>alert(1)</script>\n' },
          { type: 'text-delta', id: 't', delta: '```\n' },
          { type: 'text-end', id: 't' },
          { type: 'source-url', sourceId: 's1', url: 'http://evil.example/', title: 'Evil' },
          { type: 'error', errorText: 'the model broke off its answer' },
        ]
          .map((c) => `data: ${JSON.stringify(c)}\n\n`)
          .join(''),
      },
    ];
    await p.route('**/discovery/v2/assistant/**', (route) => route.fulfill(answers.shift()!));
    await p.goto(origin + '/', { waitUntil: 'networkidle' });
    await openWithKeyboard(p);
    const dialog = p.getByRole('dialog', { name: 'Ask the documentation' });
    await p.keyboard.type('Anything?');
    await p.keyboard.press('Enter');
    const first = dialog.locator('.airlock-assistant-answer').first();
    await expect.poll(() => first.getAttribute('aria-busy')).toBe('false');
    expect(await first.textContent()).toBe('Too many questions for now (rate limit reached). Please ask again in 2 minutes.');

    await p.keyboard.type('Now?');
    await p.keyboard.press('Enter');
    const down = dialog.locator('.airlock-assistant-answer').nth(1);
    await expect.poll(() => down.getAttribute('aria-busy')).toBe('false');
    expect(await down.textContent()).toBe('The assistant is unavailable now: the model server did not answer. Please ask again in 30 seconds.');

    await p.keyboard.type('Again?');
    await p.keyboard.press('Enter');
    const second = dialog.locator('.airlock-assistant-answer').nth(2);
    await expect.poll(() => second.getAttribute('aria-busy')).toBe('false');
    expect(await second.locator('ul > li').allTextContents()).toEqual(['one x (javascript:window.__pwned=1)', 'two <b>bold</b>']);
    expect(await second.locator('pre > code').textContent()).toBe('<script>alert(1)</script>');
    expect(await second.locator('.airlock-assistant-error').textContent()).toBe('The answer broke off: the model broke off its answer');
    expect(await dialog.locator('a, b, script, img').count()).toBe(0);
    expect(await dialog.getByRole('list', { name: 'Sources' }).count()).toBe(0);
    expect(rec.requests.filter((u) => originOf(u) !== null && originOf(u) !== origin)).toEqual([]);
    expect(rec.pageErrors).toEqual([]);
    expect(await violations(p)).toEqual([]);
  });

  it('a long answer in small pieces is drawn a few times as it streams, not once per piece (which froze the page for seconds)', async () => {
    const origin = await serve(store);
    const p = await newPage();
    const pieces = Array.from({ length: 5000 }, (_, i) => (i % 50 === 49 ? '[x](/p) ' : i % 7 === 0 ? '**b** ' : 'wor ')); // ~20,000 characters
    const body = [
      { type: 'start' },
      { type: 'text-start', id: 't' },
      ...pieces.map((delta) => ({ type: 'text-delta', id: 't', delta })),
      { type: 'text-end', id: 't' },
    ]
      .map((c) => `data: ${JSON.stringify(c)}\n\n`)
      .join('');
    await p.route('**/discovery/v2/assistant/**', (route) => route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body }));
    await p.goto(origin + '/', { waitUntil: 'networkidle' });
    await openWithKeyboard(p);
    const dialog = p.getByRole('dialog', { name: 'Ask the documentation' });
    // count how often the answer is drawn anew (its children replaced)
    await p.evaluate(() => {
      const w = window as unknown as { __draws: number };
      w.__draws = 0;
      new MutationObserver((records) => {
        for (const r of records) if ((r.target as Element).classList?.contains('airlock-assistant-answer') && r.removedNodes.length > 0) w.__draws++;
      }).observe(document.body, { childList: true, subtree: true });
    });
    await p.keyboard.type('Long?');
    await p.keyboard.press('Enter');
    const answer = dialog.locator('.airlock-assistant-answer').first();
    await expect.poll(() => answer.getAttribute('aria-busy'), { timeout: 20_000 }).toBe('false');
    expect((await answer.textContent())!.length).toBeGreaterThan(18_000);
    expect(await answer.locator('a[href$="/p"]').count()).toBe(100);
    expect(await p.evaluate(() => (window as unknown as { __draws: number }).__draws)).toBeLessThan(50);
  });

  it("stays away from a page that holds the export's own assistant widget (local-assistant answers that one)", async () => {
    const fx = await fixtureStore();
    cleanups.push(() => fx.cleanup());
    const origin = await serve(fx.store);
    const p = await newPage();
    const rec = record(p);
    await p.goto(origin + '/getting-started/', { waitUntil: 'networkidle' });
    expect(await p.locator('#assistant-widget').isVisible()).toBe(true);
    expect(await p.locator('script[src="/_airlock/assistant.js"]').count()).toBe(1);
    expect(await p.locator('.airlock-assistant-trigger, dialog.airlock-assistant').count()).toBe(0);
    expect(await p.locator('button.airlock-search-trigger').isVisible()).toBe(true);
    expect(rec.pageErrors).toEqual([]);
  });

  it("takes itself away when the page's own code adds the export's widget before load", async () => {
    const origin = await serve(store);
    const p = await newPage();
    const rec = record(p);
    await p.goto(origin + '/guide/late/', { waitUntil: 'load' });
    expect(await p.locator('#assistant-widget').textContent()).toBe('the export widget');
    await expect.poll(() => p.locator('.airlock-assistant-trigger, dialog.airlock-assistant').count()).toBe(0);
    expect(rec.pageErrors).toEqual([]);
  });

  it("takes itself away when the page's own code adds the export's widget after load (a widget that loads lazily)", async () => {
    const origin = await serve(store);
    const p = await newPage();
    const rec = record(p);
    await p.goto(origin + '/guide/later/', { waitUntil: 'load' });
    expect(await p.locator('.airlock-assistant-trigger').count()).toBe(1);
    await expect.poll(() => p.locator('#assistant-widget').count()).toBe(1);
    await expect.poll(() => p.locator('.airlock-assistant-trigger, dialog.airlock-assistant').count()).toBe(0);
    expect(rec.pageErrors).toEqual([]);
  });
});
