import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { importPackage } from '../../src/store/index.js';
import { makePackage } from '../helpers/make-package.js';
import { airlockAsync } from '../helpers/bin.js';
import { start, tempDir, type Running } from '../mirror/helpers.js';
import { until as untilValue } from '../helpers/wait.js';

/**
 * A slow bundle server must not keep a replica down that has a good version: it is served (ready
 * 200) while the bundle downloads, the server switches once the new version is imported, and the
 * download is bounded (headers, minimum rate over a window, overall deadline) with limits the
 * values file sets — small here, so each case takes seconds.
 */
let t: Awaited<ReturnType<typeof tempDir>>;
let pkgV1: string;
let pkgV2: Buffer;
let n = 0;
const running: Running[] = [];
const servers: (Server | TcpServer)[] = [];
const timers = new Set<NodeJS.Timeout>();

beforeAll(async () => {
  t = await tempDir('airlock-slow-bundle-');
  pkgV1 = (await makePackage({ outDir: join(t.dir, 'pkgs'), version: 'v1' })).pkgPath;
  pkgV2 = await readFile((await makePackage({ outDir: join(t.dir, 'pkgs'), version: 'v2' })).pkgPath);
});
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
  for (const x of timers) clearInterval(x);
  timers.clear();
  for (const s of servers.splice(0)) {
    if ('closeAllConnections' in s) s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});
afterAll(async () => t.cleanup());

async function bundleServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const s = createServer(handle);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  servers.push(s);
  return `http://127.0.0.1:${(s.address() as { port: number }).port}/bundle.airlock?sig=secret-signature`;
}

/** Call `write` every `ms` until the client goes away (or the test ends). */
function every(res: ServerResponse, ms: number, write: () => void): void {
  const x = setInterval(write, ms);
  timers.add(x);
  res.on('close', () => clearInterval(x));
}

async function setup(url: string, download: string, withV1 = true): Promise<{ values: string; store: string }> {
  const dir = join(t.dir, `case${++n}`);
  const store = join(dir, 'store');
  await mkdir(dir, { recursive: true });
  if (withV1) await importPackage(pkgV1, { store, trust: [], allowUnsigned: true, activate: true });
  const values = join(dir, 'values.yaml');
  await writeFile(values, `staticExport:\n  bundleUrl: ${url}\n  allowUnsigned: true\n  download: ${download}\nstore: ${store}\n`);
  return { values, store };
}

const ready = async (url: string) => {
  const r = await fetch(url + '/_airlock/ready');
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};
const until = <T>(f: () => Promise<T | null | undefined | false>, ms: number): Promise<T> => untilValue(f, { timeoutMs: ms, intervalMs: 50 });
/** `airlock serve --values` started in the background (stopped after the test). */
async function serveValues(values: string): Promise<Running> {
  const s = await start(['serve', '--values', values, '--port', '0'], {}, 20_000);
  running.push(s);
  return s;
}
/** The first ready answer with a warning: still 200 on v1, its bundle download failed; that error. */
async function failedBundle(url: string): Promise<string> {
  const warned = await until(async () => {
    const r = await ready(url);
    return r.body.warning ? r : null;
  }, 20_000);
  expect(warned.status).toBe(200);
  expect(warned.body).toMatchObject({ version: 'v1', bundle: { state: 'failed' } });
  return String((warned.body.bundle as { error: string }).error);
}

describe('serve --values: a slow bundle server', () => {
  it('serves the active version while the bundle downloads (ready 200), then switches to the imported one', { timeout: 60_000 }, async () => {
    let release: (() => void) | undefined;
    const url = await bundleServer((_req, res) => {
      // Headers only once the test says so: until then the download waits.
      release = () => res.writeHead(200, { 'content-length': pkgV2.length }).end(pkgV2);
    });
    const { values } = await setup(url, '{headersTimeoutSeconds: 20, rateWindowSeconds: 20, timeoutSeconds: 30}');
    const s = await serveValues(values);
    await until(async () => release !== undefined, 20_000);
    const during = await ready(s.url);
    expect(during.status).toBe(200);
    expect(during.body).toMatchObject({ status: 'ready', version: 'v1', bundle: { state: 'downloading' } });
    expect(JSON.stringify(during.body)).not.toContain('secret-signature');
    expect((await fetch(s.url + '/')).headers.get('x-airlock-version')).toBe('v1');
    release!();
    await until(async () => (await fetch(s.url + '/')).headers.get('x-airlock-version') === 'v2', 20_000);
    expect((await ready(s.url)).body).toMatchObject({ status: 'ready', version: 'v2', bundle: { state: 'installed', version: 'v2' } });
    expect(s.stderr()).not.toContain('secret-signature');
  });

  it('a header stall: the active version is served at once; the download gives up within its bounds and ready says why', async () => {
    const url = await bundleServer(() => {}); // never answers
    const { values } = await setup(url, '{headersTimeoutSeconds: 0.3, minBytesPerSecond: 1024, rateWindowSeconds: 1, timeoutSeconds: 5}');
    const t0 = performance.now();
    const s = await serveValues(values);
    expect((await ready(s.url)).status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(20_000); // was ~156 s: the download came first
    expect(await failedBundle(s.url)).toMatch(
      /^AIRLOCK_DOWNLOAD_(TOO_SLOW|FAILED): .*(went under 1 KiB\/s for 1 s|no response headers from 127\.0\.0\.1:\d+ within 0\.3 s)/,
    );
    expect(performance.now() - t0).toBeLessThan(40_000);
  }, 60_000);

  it('a 1 B/s trickle with nothing to fall back on: exit 1 AIRLOCK_DOWNLOAD_TOO_SLOW within the window, not never', async () => {
    const url = await bundleServer((_req, res) => {
      res.writeHead(200, { 'content-length': 1_000_000 });
      every(res, 100, () => res.write('x'));
    });
    const { values } = await setup(url, '{minBytesPerSecond: 1024, rateWindowSeconds: 1}', false);
    const t0 = performance.now();
    const r = await airlockAsync(['serve', '--values', values, '--port', '0'], { timeoutMs: 30_000 });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /staticExport.bundleUrl: the bundle download from http:\/\/127\.0\.0\.1:\d+ went under 1 KiB\/s for 1 s \(\d+ bytes came in that time\)/,
    );
    expect(r.stderr).toMatch(/\[AIRLOCK_DOWNLOAD_TOO_SLOW\]\s*$/);
    expect(performance.now() - t0).toBeLessThan(25_000); // had no bound at all
  }, 40_000);

  it('fast enough but endless: the overall deadline ends it (AIRLOCK_DOWNLOAD_TIMEOUT)', async () => {
    const url = await bundleServer((_req, res) => {
      res.writeHead(200, { 'content-length': 1_000_000_000 });
      every(res, 50, () => res.write(Buffer.alloc(8192)));
    });
    const { values } = await setup(url, '{minBytesPerSecond: 1024, rateWindowSeconds: 1, timeoutSeconds: 1.5}', false);
    const r = await airlockAsync(['serve', '--values', values, '--port', '0'], { timeoutMs: 20_000 });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /staticExport.bundleUrl: the bundle download from http:\/\/127\.0\.0\.1:\d+ did not finish within 1\.5 s.*\[AIRLOCK_DOWNLOAD_TIMEOUT\]\s*$/s,
    );
  }, 30_000);

  it('an endless body with no announced length stops at staticExport.download.maxBytes, and no part is kept', async () => {
    let sent = 0;
    const url = await bundleServer((_req, res) => {
      res.writeHead(200, { 'transfer-encoding': 'chunked' });
      every(res, 5, () => {
        res.write(Buffer.alloc(64 * 1024));
        sent += 64 * 1024;
      });
    });
    const { values, store } = await setup(url, '{maxBytes: 1048576, timeoutSeconds: 60}', false);
    const r = await airlockAsync(['serve', '--values', values, '--port', '0'], { timeoutMs: 30_000 });
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/sent more than the 1048576 bytes allowed \(staticExport\.download\.maxBytes\)/);
    expect(r.stderr).toMatch(/\[AIRLOCK_TOO_LARGE\]\s*$/);
    expect(sent).toBeLessThan(64 << 20);
    const parts = await readdir(join(store, 'downloads')).catch(() => []);
    expect(parts.filter((f) => f.endsWith('.part'))).toEqual([]);
  }, 40_000);

  it('downloads/ keeps one partial download: a part left by a link no longer configured is removed when the bundle download starts', async () => {
    const url = await bundleServer((_req, res) => res.writeHead(200, { 'content-length': pkgV2.length }).end(pkgV2));
    const { values, store } = await setup(url, '{timeoutSeconds: 30}');
    await mkdir(join(store, 'downloads'), { recursive: true });
    await writeFile(join(store, 'downloads', '0123456789abcdef.part'), Buffer.alloc(4096));
    await writeFile(join(store, 'downloads', '0123456789abcdef.part.json'), '{}');
    await writeFile(join(store, 'downloads', 'notes.txt'), 'not a part');
    const s = await serveValues(values);
    await until(async () => (await fetch(s.url + '/')).headers.get('x-airlock-version') === 'v2', 20_000);
    expect((await readdir(join(store, 'downloads'))).sort()).toEqual(['notes.txt']);
  }, 40_000);

  it('a Content-Length above staticExport.download.maxBytes is refused before the body is read', async () => {
    const url = await bundleServer((_req, res) => {
      res.writeHead(200, { 'content-length': 50 << 20 });
      every(res, 20, () => res.write(Buffer.alloc(8192)));
    });
    const { values } = await setup(url, '{maxBytes: 1048576}', false);
    const r = await airlockAsync(['serve', '--values', values, '--port', '0'], { timeoutMs: 30_000 });
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toMatch(
      /announces 52428800 bytes \(Content-Length\), more than the 1048576 allowed \(staticExport\.download\.maxBytes\); nothing was downloaded.*\[AIRLOCK_TOO_LARGE\]/s,
    );
    expect(r.stderr).not.toContain('secret-signature');
  }, 40_000);

  it('an HTTP 500 whose status line holds control characters: AIRLOCK_BAD_HTTP naming the status, escaped (not "too slow"); the active version is still served', async () => {
    const raw = createTcpServer((c) => {
      c.on('error', () => {});
      c.once('data', () => c.end('HTTP/1.1 500 Bad\x01\x7f\x1b[31mred\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello'));
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    servers.push(raw);
    const url = `http://127.0.0.1:${(raw.address() as { port: number }).port}/bundle.airlock?sig=secret-signature`;
    const { values } = await setup(url, '{headersTimeoutSeconds: 2, minBytesPerSecond: 1024, rateWindowSeconds: 1, timeoutSeconds: 10}');
    const s = await serveValues(values);
    const error = await failedBundle(s.url);
    expect(error).toMatch(/^AIRLOCK_BAD_HTTP: .*127\.0\.0\.1:\d+.*HTTP 500 "Bad\\x01(\\x7f)?\\x1b\[31mred"/);
    expect(error).not.toMatch(/too slow|went under|AIRLOCK_DOWNLOAD_TOO_SLOW/);
    expect((await fetch(s.url + '/')).headers.get('x-airlock-version')).toBe('v1');
    await until(async () => /\[AIRLOCK_BAD_HTTP\]|AIRLOCK_BAD_HTTP:/.test(s.stderr()), 5_000);
    expect(s.stderr()).toMatch(/HTTP 500 "Bad\\x01(\\x7f)?\\x1b\[31mred"/);
    expect(s.stderr()).not.toMatch(/[\x01\x7f\x1b]/); // eslint-disable-line no-control-regex -- the point
    expect(s.stderr()).not.toContain('secret-signature');
  }, 40_000);

  it('the bounds are checked values keys: a wrong one is exit 2 naming it', async () => {
    const { values } = await setup('http://127.0.0.1:9/b.tar.gz', '{minBytesPerSecond: -1, rateWindowSeconds: "x"}');
    const r = await airlockAsync(['serve', '--values', values, '--port', '0']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('staticExport.download.minBytesPerSecond');
    expect(r.stderr).toContain('staticExport.download.rateWindowSeconds');
  });
});
