import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveFeatures } from '../../src/features/index.js';
import { vendorCollector, vendorFlags } from '../../src/fetch/vendor/index.js';
import { packArchive } from '../../src/package/index.js';
import { createAirlockServer } from '../../src/serve/index.js';
import { featureOptions } from '../../src/serve/features.js';
import { importPackage } from '../../src/store/index.js';
import { makeArchive } from '../helpers/make-package.js';
import { WEB_FONT_FAMILY, machineFont, startFakeCdn, vendorSite, type FakeCdn } from '../helpers/fake-cdn.js';
import type { ObserveReport } from '../../src/fetch/vendor/index.js';
import { CHROMIUM, Sentinel, chromiumAvailable, launchBehindSentinel } from './chromium.js';

/**
 * Vendoring, end to end: with `--vendor`, a page that uses a web font and a CDN stylesheet renders
 * with them air-gapped. Three screenshots of the same part of the page in Debian's Chromium:
 * - reference: the page as online, its third-party URLs reachable (on 127.0.0.1);
 * - vendored: packed with `--vendor fonts,styles`, imported, served air-gapped — must equal the reference;
 * - plain: packed without `--vendor`, served air-gapped — must differ (so the comparison can fail).
 * The browser's only way out is a proxy on 127.0.0.1 standing in for the internet; the vendored
 * page must send it nothing and request nothing from another origin.
 */
const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

let root: string;
let cdn: FakeCdn;
let sentinel: Sentinel;
let browser: Browser;
let store: string;

async function serveVersion(version: string) {
  // Local search off: its injected button is not what this test compares.
  const resolved = resolveFeatures({ deployment: 'air-gapped', disable: ['local-search'] });
  const srv = await createAirlockServer({ store, version, lease: false, log: () => {}, ...featureOptions(resolved) } as Parameters<
    typeof createAirlockServer
  >[0]);
  const url = await srv.listen(0, '127.0.0.1');
  return { origin: url.replace(/\/$/, ''), close: () => srv.close(1000) };
}

async function shot(page: Page, url: string): Promise<{ png: Buffer; fontLoaded: boolean; requests: string[] }> {
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  const res = await page.goto(url, { waitUntil: 'networkidle' });
  expect(res?.status(), url).toBe(200);
  await page.evaluate(() => document.fonts.ready);
  const fontLoaded = await page.evaluate(
    (f) => document.fonts.check(`28px "${f}"`) && [...document.fonts].some((x) => x.family.replace(/"/g, '') === f && x.status === 'loaded'),
    WEB_FONT_FAMILY,
  );
  const png = await page.locator('#shot').screenshot({ animations: 'disabled' });
  return { png, fontLoaded, requests };
}

/**
 * Online-only widgets: MkDocs Material's repository widget (the theme's script, stood in for by an
 * inline one, fetches stars and forks from api.github.com for `[data-md-component=source]`) and
 * a video embed. Air-gapped, both are links with their names, and nothing is attempted off-origin.
 */
const WIDGETS_PAGE = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Widgets</title></head><body>
<a href="https://github.com/acme/widgets" title="Go to repository" class="md-source" data-md-component="source"><div class="md-source__repository">acme/widgets</div></a>
<iframe src="https://www.youtube.com/embed/aqz-KE-bpKQ" title="Install tour" width="560" height="315"></iframe>
<script>for (const el of document.querySelectorAll('[data-md-component=source]')) fetch('https://api.github.com/repos/acme/widgets').then((r) => r.json()).then((j) => { el.querySelector('.md-source__repository').textContent += ' ' + j.stargazers_count; }, () => {});</script>
</body></html>
`;

beforeAll(async () => {
  expect(chromiumAvailable(), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`).toBe(true);
  await mkdir(ARTIFACTS, { recursive: true });
  root = await mkdtemp(join(tmpdir(), 'airlock-vendor-browser-'));
  const site = join(root, 'site');
  for (const [p, c] of Object.entries({ ...vendorSite({ script: false }), 'widgets.html': WIDGETS_PAGE })) {
    await mkdir(dirname(join(site, p)), { recursive: true });
    await writeFile(join(site, p), c);
  }
  const archive = join(root, 'export.tar.gz');
  await makeArchive(site, 'tar.gz', archive);
  cdn = await startFakeCdn();
  const mirrors = cdn.mirrors.filter((_, i) => i % 2 === 1);
  const vendor = vendorCollector({ ...vendorFlags('fonts,styles', mirrors)! });
  const out = join(root, 'out');
  const withVendor = await packArchive({ archivePath: archive, domain: 'docs.example.com', version: 'vendored', outDir: out, vendor });
  const plain = await packArchive({ archivePath: archive, domain: 'docs.example.com', version: 'plain', outDir: out });
  store = join(root, 'store');
  await importPackage(withVendor.package, { store, trust: [], allowUnsigned: true, activate: true });
  await importPackage(plain.package, { store, trust: [], allowUnsigned: true });
  ({ sentinel, browser } = await launchBehindSentinel());
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await sentinel?.stop();
  await cdn?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('--vendor in a real browser', () => {
  it('air-gapped, the vendored page renders exactly as the page online; without --vendor it does not; nothing leaves the origin', async () => {
    const ctx = await browser.newContext({ viewport: { width: 800, height: 600 }, deviceScaleFactor: 1 });
    const vendored = await serveVersion('vendored');
    const plain = await serveVersion('plain');
    try {
      const ref = await shot(await ctx.newPage(), `http://127.0.0.1:${cdn.port}/ref/`);
      expect(ref.fontLoaded, 'the reference page loads the web font from "the internet"').toBe(true);

      const before = sentinel.asked.length;
      const v = await shot(await ctx.newPage(), vendored.origin + '/');
      expect(v.fontLoaded, 'the vendored web font is used air-gapped').toBe(true);
      expect(
        v.requests.filter((u) => !u.startsWith(vendored.origin + '/')),
        'requests to another origin',
      ).toEqual([]);
      expect(v.requests.filter((u) => u.includes('/_airlock/vendor/')).length).toBeGreaterThanOrEqual(5); // 3 stylesheets, the import, the font (+ the image)
      expect(sentinel.pagesAsked(before), 'connections that left the page').toEqual([]);

      const p = await shot(await ctx.newPage(), plain.origin + '/');
      expect(p.fontLoaded, 'without --vendor the web font cannot load').toBe(false);

      await writeFile(`${ARTIFACTS}vendor-reference.png`, ref.png);
      await writeFile(`${ARTIFACTS}vendor-air-gapped.png`, v.png);
      await writeFile(`${ARTIFACTS}vendor-plain-air-gapped.png`, p.png);
      expect(v.png.equals(ref.png), 'the vendored page looks as it does online (test/artifacts/vendor-*.png)').toBe(true);
      expect(p.png.equals(ref.png), 'the page without --vendor must look different (else this test proves nothing)').toBe(false);
      process.stderr.write(
        `vendor (browser): reference ${ref.png.length} B, vendored ${v.png.length} B (equal), plain ${p.png.length} B (differs); ${v.requests.length} requests, all same-origin\n`,
      );
    } finally {
      await ctx.close();
      await vendored.close();
      await plain.close();
    }
  }, 60_000);

  it('online-only widgets: the repository widget stays a link with its name, the video a link with its title; 0 off-origin requests', async () => {
    const ctx = await browser.newContext();
    const srv = await serveVersion('vendored');
    try {
      const page = await ctx.newPage();
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      const before = sentinel.asked.length;
      expect((await page.goto(srv.origin + '/widgets.html', { waitUntil: 'networkidle' }))?.status()).toBe(200);
      const repo = page.locator('a.md-source');
      expect(await repo.getAttribute('href')).toBe('https://github.com/acme/widgets');
      expect(await repo.innerText()).toBe('acme/widgets');
      const video = page.locator('a[data-airlock="embed-link"]');
      expect(await video.getAttribute('href')).toBe('https://www.youtube.com/watch?v=aqz-KE-bpKQ');
      expect(await video.innerText()).toBe('Install tour');
      expect(await page.locator('iframe').count()).toBe(0);
      expect(
        requests.filter((u) => !u.startsWith(srv.origin + '/')),
        'requests to another origin',
      ).toEqual([]);
      expect(sentinel.pagesAsked(before), 'connections that left the page').toEqual([]);
    } finally {
      await ctx.close();
      await srv.close();
    }
  }, 60_000);
});

/**
 * `--vendor-observe`: a page whose inline script loads a script from a CDN at run time (a second
 * 127.0.0.1 origin behind https://cdn.runtime.test, through --vendor-mirror), which then loads a
 * font with `FontFace`. No static scan can see either. Packed with observation and served
 * air-gapped, the page must render as it does with the CDN reachable, with 0 off-origin requests.
 */
const RT_CDN = 'https://cdn.runtime.test';
const RT_FAMILY = 'Airlock Run Time';
const RT_PAGE = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Run time</title>
<script>const s = document.createElement('script'); s.src = '${RT_CDN}/lib/rt.js'; document.head.appendChild(s);</script>
</head><body style="margin:16px;font-family:serif">
<main id="shot" style="display:inline-block;width:640px"><h1>Loaded at run time</h1>
<pre style="font-family:'${RT_FAMILY}',monospace;font-size:28px">The quick brown fox 0123456789 {}[]</pre></main>
</body></html>
`;
const RT_JS = `new FontFace('${RT_FAMILY}', 'url(${RT_CDN}/lib/rt-font.ttf)').load().then((f) => { document.fonts.add(f); document.documentElement.dataset.rt = 'ready'; }, () => { document.documentElement.dataset.rt = 'failed'; });\n`;

describe('--vendor-observe in a real browser', () => {
  let rtRoot: string;
  let rtCdn: Server;
  let rtPort = 0;
  const rtAsked: string[] = [];
  let report: ObserveReport | undefined;

  beforeAll(async () => {
    rtRoot = await mkdtemp(join(tmpdir(), 'airlock-vendor-observe-'));
    rtCdn = createServer((req, res) => {
      rtAsked.push(req.url ?? '');
      if (req.url === '/lib/rt.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(RT_JS);
      if (req.url === '/lib/rt-font.ttf') return void res.writeHead(200, { 'content-type': 'font/ttf', 'access-control-allow-origin': '*' }).end(machineFont());
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => rtCdn.listen(0, '127.0.0.1', r));
    rtPort = (rtCdn.address() as { port: number }).port;
    const site = join(rtRoot, 'site');
    await mkdir(site, { recursive: true });
    await writeFile(join(site, 'index.html'), RT_PAGE);
    const archive = join(rtRoot, 'export.tar.gz');
    await makeArchive(site, 'tar.gz', archive);
    const flags = vendorFlags('fonts,scripts', [`${RT_CDN}=http://127.0.0.1:${rtPort}`], { observe: true, chromium: CHROMIUM })!;
    flags.observe!.onReport = (r) => void (report = r);
    const pkg = await packArchive({
      archivePath: archive,
      domain: 'docs.example.com',
      version: 'observed',
      outDir: join(rtRoot, 'out'),
      vendor: vendorCollector(flags),
    });
    await importPackage(pkg.package, { store, trust: [], allowUnsigned: true });
  }, 120_000);
  afterAll(async () => {
    await new Promise<void>((r) => (rtCdn ? rtCdn.close(() => r()) : r()));
    if (rtRoot) await rm(rtRoot, { recursive: true, force: true });
  });

  const rtShot = async (page: Page, url: string) => {
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    expect((await page.goto(url, { waitUntil: 'networkidle' }))?.status(), url).toBe(200);
    await page.waitForFunction(() => document.documentElement.dataset.rt !== undefined, undefined, { timeout: 10_000 });
    const state = await page.evaluate(() => document.documentElement.dataset.rt);
    return { png: await page.locator('#shot').screenshot({ animations: 'disabled' }), state, requests };
  };

  it('the run-time script and the font it loads are carried; air-gapped the page renders as online, 0 off-origin requests', async () => {
    expect(report).toMatchObject({ browser: true, pages: 1, timedOut: 0, capped: false });
    expect(rtAsked).toEqual(expect.arrayContaining(['/lib/rt.js', '/lib/rt-font.ttf']));
    const ctx = await browser.newContext({ viewport: { width: 800, height: 600 }, deviceScaleFactor: 1 });
    const srv = await serveVersion('observed');
    try {
      // Reference: the page online, the CDN reachable (its requests answered by the 127.0.0.1 CDN).
      const refPage = await ctx.newPage();
      await refPage.route(`${RT_CDN}/**`, async (route) => {
        const r = await fetch(`http://127.0.0.1:${rtPort}${new URL(route.request().url()).pathname}`);
        await route.fulfill({
          status: r.status,
          body: Buffer.from(await r.arrayBuffer()),
          headers: { 'content-type': r.headers.get('content-type') ?? '', 'access-control-allow-origin': '*' },
        });
      });
      await refPage.route('https://docs.example.com/', (route) =>
        route.fulfill({ status: 200, body: RT_PAGE, headers: { 'content-type': 'text/html; charset=utf-8' } }),
      );
      const ref = await rtShot(refPage, 'https://docs.example.com/');
      expect(ref.state, 'online, the run-time font loads').toBe('ready');

      const before = sentinel.asked.length;
      const airPage = await ctx.newPage();
      const v = await rtShot(airPage, srv.origin + '/');
      expect(v.state, 'air-gapped, the carried font loads through the carried script').toBe('ready');
      // fetch, XHR and setAttribute of a carried URL reach the copy too (same origin, the CSP stays 'self').
      const runTime = await airPage.evaluate(async (u) => {
        const f = await fetch(u);
        const x = await new Promise<number>((resolve) => {
          const r = new XMLHttpRequest();
          r.open('GET', u);
          r.onload = () => resolve(r.status);
          r.onerror = () => resolve(-1);
          r.send();
        });
        const s = document.createElement('script');
        s.setAttribute('src', u);
        return { fetch: f.status, fetchUrl: f.url, xhr: x, attr: s.getAttribute('src') };
      }, `${RT_CDN}/lib/rt.js`);
      expect(runTime).toMatchObject({ fetch: 200, xhr: 200 });
      expect(runTime.fetchUrl).toMatch(new RegExp(`^${srv.origin}/_airlock/vendor/[0-9a-f]{64}\\.js$`));
      expect(runTime.attr).toMatch(/^\/_airlock\/vendor\/[0-9a-f]{64}\.js$/);
      expect(
        v.requests.filter((u) => !u.startsWith(srv.origin + '/')),
        'requests to another origin',
      ).toEqual([]);
      expect(v.requests).toContain(srv.origin + '/_airlock/vendor-map.js');
      expect(v.requests.filter((u) => u.includes('/_airlock/vendor/')).length).toBe(4); // the script, the font; fetch and XHR of the script
      expect(sentinel.pagesAsked(before), 'connections that left the page').toEqual([]);
      await writeFile(`${ARTIFACTS}vendor-observe-reference.png`, ref.png);
      await writeFile(`${ARTIFACTS}vendor-observe-air-gapped.png`, v.png);
      expect(v.png.equals(ref.png), 'the observed page looks as it does online (test/artifacts/vendor-observe-*.png)').toBe(true);
      process.stderr.write(
        `vendor-observe (browser): reference ${ref.png.length} B, air-gapped ${v.png.length} B (equal); ${v.requests.length} requests, all same-origin\n`,
      );
    } finally {
      await ctx.close();
      await srv.close();
    }
  }, 60_000);
});
