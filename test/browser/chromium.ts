import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { existsSync } from 'node:fs';
import { CHROMIUM_ARGS as CHROMIUM_FLAGS } from '../../src/fetch/vendor/chromium.js';
import { createServer, type Server, type Socket } from 'node:net';

/** Debian's Chromium (CI installs it with apt-get); playwright-core never downloads a browser. */
export const CHROMIUM = process.env.AIRLOCK_CHROMIUM ?? '/usr/bin/chromium';

/** The flags airlock's own `--vendor-observe` starts Chromium with (headless, no sandbox, no background traffic). */
export const CHROMIUM_ARGS = [...CHROMIUM_FLAGS];

/**
 * Hosts Chromium itself talks to in the background (component updates, account checks) despite
 * the flags above: seen through a proxy with no page open. Never a page's request.
 */
export const CHROMIUM_SERVICE_HOSTS: readonly string[] = [
  'update.googleapis.com',
  'accounts.google.com',
  'clients2.google.com',
  'clientservices.googleapis.com',
  'optimizationguide-pa.googleapis.com',
  'safebrowsingohttpgateway.googleapis.com',
  'content-autofill.googleapis.com',
  'redirector.gvt1.com',
  'edgedl.me.gvt1.com',
];

/** The host a proxy request line names: `CONNECT host:443 HTTP/1.1` or `GET http://host/path HTTP/1.1`. */
export function proxyTarget(line: string): string {
  const [method = '', target = ''] = line.split(' ');
  if (method === 'CONNECT') return target.replace(/:\d+$/, '');
  try {
    return new URL(target).hostname;
  } catch {
    return target;
  }
}

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

/** `extraArgs`: more Chromium flags (a proxy standing in for the internet, say). */
export async function launch(extraArgs: string[] = []): Promise<Browser> {
  if (!chromiumAvailable()) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`);
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs], headless: true, timeout: 30_000 });
}

/**
 * A page in a fresh context (closed through `cleanups`) that collects its CSP violations in the
 * page (`violations`): a console error alone can be missed.
 */
export async function watchedPage(browser: Browser, cleanups: Array<() => Promise<void> | void>): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext();
  cleanups.push(() => ctx.close());
  await ctx.addInitScript(() => {
    const w = window as unknown as { __violations: string[] };
    w.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  return { ctx, page: await ctx.newPage() };
}

/** The CSP violations a watchedPage saw. */
export const violations = (page: Page): Promise<string[]> => page.evaluate(() => (window as unknown as { __violations: string[] }).__violations);

export interface PageRecord {
  requests: string[];
  consoleErrors: string[];
  pageErrors: string[];
}

/** Record every request the page makes (including ones that fail or are blocked) and its errors. */
export function record(page: Page): PageRecord {
  const rec: PageRecord = { requests: [], consoleErrors: [], pageErrors: [] };
  page.on('request', (r) => rec.requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') rec.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => rec.pageErrors.push(String(e)));
  return rec;
}

/** The internet, as far as the browser knows: counts every connection and remembers what it asked for. */
export class Sentinel {
  readonly asked: string[] = [];
  /** What the pages asked for: everything but Chromium's own background services. */
  pagesAsked(from = 0): string[] {
    return this.asked.slice(from).filter((l) => !CHROMIUM_SERVICE_HOSTS.includes(proxyTarget(l)));
  }
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor() {
    this.server = createServer((s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.once('data', (d: Buffer) => {
        this.asked.push(d.toString('latin1').split('\r\n')[0]!);
        s.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      });
      s.on('error', () => {});
    });
  }
  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/**
 * A started Sentinel and a Chromium whose only way out is a proxy to it: every request not to a
 * loopback address goes there (Chromium bypasses loopback by default).
 */
export async function launchBehindSentinel(): Promise<{ sentinel: Sentinel; browser: Browser }> {
  const sentinel = new Sentinel();
  await sentinel.start();
  try {
    return { sentinel, browser: await launch([`--proxy-server=http://127.0.0.1:${sentinel.port}`]) };
  } catch (err) {
    await sentinel.stop();
    throw err;
  }
}
