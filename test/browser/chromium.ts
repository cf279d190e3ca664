import { chromium, type Browser, type Page } from 'playwright-core';
import { existsSync } from 'node:fs';

/** Debian's Chromium (CI installs it with apt-get); playwright-core never downloads a browser. */
export const CHROMIUM = process.env.AIRLOCK_CHROMIUM ?? '/usr/bin/chromium';

/**
 * The flags the issue pins: headless, no sandbox (CI runs as root), and no background traffic of
 * Chromium's own, so that every request we record is the page's.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/**
 * Hosts Chromium itself talks to in the background (component updates, account checks) despite
 * the flags above: seen through a proxy with no page open. Never a page's request.
 */
export const CHROMIUM_SERVICE_HOSTS: readonly string[] = [
  'update.googleapis.com', 'accounts.google.com', 'clients2.google.com', 'clientservices.googleapis.com',
  'optimizationguide-pa.googleapis.com', 'safebrowsingohttpgateway.googleapis.com', 'content-autofill.googleapis.com',
  'redirector.gvt1.com', 'edgedl.me.gvt1.com',
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
