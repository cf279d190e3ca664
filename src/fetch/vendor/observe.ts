import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import mime from 'mime-types';
import type { BrowserContext, Route } from 'playwright-core';
import { vendorUrlProblem } from '../../package/index.js';
import { CHROMIUM_ARGS } from './chromium.js';
import { vendorForUrl } from '../../features/analytics.js';
import type { Got } from './get.js';

/**
 * `--vendor-observe` (vendoring): what pages load at run time. A sample of the export's pages is
 * rendered in headless Chromium (driven by playwright-core) on a made-up origin that the route
 * handler below answers from the verified archive's files; every request to another origin is
 * recorded. Scripts, stylesheets and fonts are answered through vendoring's own downloader
 * (https only, the mirrors, the size and redirect bounds), so a script that loads a font is seen
 * loading it; anything else is refused, and so are trackers and consent managers. Nothing reaches the network but through that downloader:
 * the browser's own proxy leads nowhere and service workers are blocked.
 * Bounded: at most `maxPages` pages, `pageTimeoutMs` each (a page that never finishes loading is
 * left at its limit), and `maxRequests` distinct off-origin URLs in all (more are refused).
 */
export interface ObserveOptions {
  chromium: string;
  maxPages: number;
  pageTimeoutMs: number;
  maxRequests: number;
  /** The bounded downloader (vendorGet with the command's options). */
  get: (url: string) => Promise<Got>;
  signal?: AbortSignal;
}

export type ObservedType = 'script' | 'stylesheet' | 'font';
export interface ObservedRequest {
  url: string;
  type: ObservedType;
}
export type ObserveReport =
  { browser: true; chromium: string; pages: number; requests: number; timedOut: number; capped: boolean } | { browser: false; reason: string };

export const OBSERVE_MAX_PAGES = 50;
export const OBSERVE_PAGE_TIMEOUT_MS = 15_000;
export const OBSERVE_MAX_REQUESTS = 1000;
/** The origin the pages are rendered on: `.invalid` never resolves, and the route handler answers it. */
const SITE = 'https://airlock-observe.invalid';
const CARRIED = new Set<string>(['script', 'stylesheet', 'font']);

export interface ObserveResult {
  report: ObserveReport;
  requests: ObservedRequest[];
  /** Off-origin URLs of a carried type that vendoring refuses (not https, not in normal form). */
  skipped: string[];
  /** What the downloader answered, by URL: the collector reuses it rather than downloading again. */
  got: Map<string, Promise<Got>>;
}

/**
 * The pages worth rendering: the home page, the first page of each top-level folder, then the
 * first page of each distinct set of script and stylesheet references (a template); at most `max`.
 */
export function samplePages(pages: ReadonlyArray<{ path: string; refs: readonly string[] }>, max: number): string[] {
  const sorted = [...pages].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const out = new Set<string>();
  const add = (p: string) => void (out.size < max && out.add(p));
  const home = sorted.find((p) => p.path === 'index.html') ?? sorted.find((p) => !p.path.includes('/'));
  if (home) add(home.path);
  const folders = new Set<string>();
  for (const p of sorted) {
    const top = p.path.includes('/') ? p.path.slice(0, p.path.indexOf('/')) : '';
    if (!folders.has(top)) {
      folders.add(top);
      add(p.path);
    }
  }
  const templates = new Set<string>();
  for (const p of sorted) {
    const key = [...new Set(p.refs)].sort().join('\n');
    if (!templates.has(key)) {
      templates.add(key);
      add(p.path);
    }
  }
  return [...out];
}

type PlaywrightCore = typeof import('playwright-core');

export async function observePages(files: ReadonlyMap<string, string>, sample: readonly string[], o: ObserveOptions): Promise<ObserveResult> {
  const empty = (reason: string): ObserveResult => ({ report: { browser: false, reason }, requests: [], skipped: [], got: new Map() });
  if (!existsSync(o.chromium)) return empty(`no Chromium at ${o.chromium}`);
  let pw: PlaywrightCore;
  try {
    pw = await import('playwright-core');
  } catch {
    return empty('playwright-core (an optional dependency) is not installed');
  }
  let browser;
  try {
    // The proxy leads nowhere: whatever the route handler does not answer (a WebSocket) cannot leave.
    // The export's scripts run in this browser: its sandbox stays on unless we run as root, where Chromium refuses it.
    const args = CHROMIUM_ARGS.filter((a) => a !== '--no-sandbox' || process.getuid?.() === 0);
    browser = await pw.chromium.launch({
      executablePath: o.chromium,
      args: [...args, '--proxy-server=http://127.0.0.1:9'],
      headless: true,
      chromiumSandbox: !args.includes('--no-sandbox'),
      timeout: 30_000,
    });
  } catch {
    return empty(`Chromium at ${o.chromium} did not start`);
  }
  const seen = new Map<string, string>(); // off-origin URL → resource type
  const skipped = new Set<string>();
  const got = new Map<string, Promise<Got>>();
  let capped = false;
  let timedOut = 0;
  let pages = 0;
  const download = (url: string) => {
    let p = got.get(url);
    if (p === undefined) {
      p = o.get(url);
      p.catch(() => {}); // the collector reports it, when it asks for the file
      got.set(url, p);
    }
    return p;
  };
  const handle = async (route: Route): Promise<void> => {
    const req = route.request();
    const url = req.url();
    if (url.startsWith(SITE + '/')) return serveSite(route, files, url);
    const type = req.resourceType();
    if (!seen.has(url)) {
      if (seen.size >= o.maxRequests) {
        capped = true;
        return route.abort('blockedbyclient');
      }
      seen.set(url, type);
    }
    // Trackers and consent managers are never carried (serve removes them): not even downloaded here.
    if (!CARRIED.has(type) || vendorForUrl(url) !== undefined) return route.abort('blockedbyclient');
    if (vendorUrlProblem(url) !== null) {
      skipped.add(url);
      return route.abort('blockedbyclient');
    }
    try {
      const g = await download(url);
      await route.fulfill({
        status: 200,
        body: g.bytes,
        headers: { 'content-type': g.contentType || 'application/octet-stream', 'access-control-allow-origin': '*' },
      });
    } catch {
      await route.abort('failed');
    }
  };
  let context: BrowserContext | null = null;
  try {
    context = await browser.newContext({ serviceWorkers: 'block', javaScriptEnabled: true });
    await context.route('**/*', (route) => handle(route).catch(() => {}));
    for (const path of sample.slice(0, o.maxPages)) {
      if (o.signal?.aborted) throw o.signal.reason;
      const page = await context.newPage();
      const t0 = Date.now();
      pages++;
      try {
        await page.goto(SITE + '/' + path.split('/').map(encodeURIComponent).join('/'), { waitUntil: 'load', timeout: o.pageTimeoutMs });
        await page.waitForLoadState('networkidle', { timeout: Math.max(1, o.pageTimeoutMs - (Date.now() - t0)) });
      } catch {
        timedOut++; // left at its limit: what it asked for so far still counts
      } finally {
        await page.close().catch(() => {});
      }
    }
  } finally {
    await context?.close().catch(() => {});
    await browser.close().catch(() => {});
  }
  const requests: ObservedRequest[] = [];
  for (const [url, type] of seen)
    if (CARRIED.has(type) && !skipped.has(url) && vendorForUrl(url) === undefined) requests.push({ url, type: type as ObservedType });
  return { report: { browser: true, chromium: o.chromium, pages, requests: seen.size, timedOut, capped }, requests, skipped: [...skipped], got };
}

/** A page's own files, from the archive's file list only (no path is built from the URL outside it). */
async function serveSite(route: Route, files: ReadonlyMap<string, string>, url: string): Promise<void> {
  let path: string;
  try {
    path = new URL(url).pathname.slice(1).split('/').map(decodeURIComponent).join('/');
  } catch {
    return route.fulfill({ status: 400, body: '' });
  }
  const candidates = path === '' || path.endsWith('/') ? [path + 'index.html'] : [path, path + '.html', path + '/index.html'];
  const hit = candidates.find((c) => files.has(c));
  if (hit === undefined) return route.fulfill({ status: 404, body: '' });
  const type = mime.lookup(hit) || 'application/octet-stream';
  const body = await readFile(files.get(hit)!);
  return route.fulfill({ status: 200, body, headers: { 'content-type': /^text\/|javascript|json/.test(type) ? `${type}; charset=utf-8` : type } });
}
