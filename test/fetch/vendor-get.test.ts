import { createServer, type Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { vendorGet } from '../../src/fetch/vendor/get.js';

/** A vendored file's network failures are said in words (the network describer), never undici's or the errno's. */
const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port };
}

const ORIGIN = 'https://fonts.googleapis.com';
const get = (port: number) =>
  vendorGet(`${ORIGIN}/font.css`, {
    mirrors: new Map([[ORIGIN, `http://127.0.0.1:${port}`]]),
    maxBytes: 1 << 20,
    timeoutMs: 5_000,
    maxRedirects: 3,
    userAgent: 'test',
  });
const LIBRARY = /ECONNREFUSED|ECONNRESET|UND_ERR|other side closed|fetch failed|SocketError|\bconnect E/;

describe('vendorGet network failures', () => {
  it('a refused connection: in words, naming where', async () => {
    const { server, port } = await listen(() => {});
    servers.pop();
    await new Promise((r) => server.close(r));
    const err = await get(port).then(
      () => null,
      (e: Error) => e,
    );
    expect(err!.message).toContain(`--vendor: cannot vendor ${ORIGIN}/font.css: `);
    expect(err!.message).toContain('connection refused');
    expect(err!.message).not.toMatch(LIBRARY);
  });

  it('a body cut short: in words', async () => {
    const { port } = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/css', 'content-length': '1000' });
      res.write('body{');
      setImmediate(() => res.socket?.destroy());
    });
    const err = await get(port).then(
      () => null,
      (e: Error) => e,
    );
    expect(err!.message).toMatch(/^--vendor: cannot vendor https:\/\/fonts\.googleapis\.com\/font\.css: reading the body failed: \S/);
    expect(err!.message).not.toMatch(LIBRARY);
  });
});

describe('vendorGet bounds', () => {
  it('a mirror that trickles its body is abandoned at the timeout, whole request included, even across garbage collections', async () => {
    // The command runs with a small young generation: collections are frequent. A deadline held
    // only weakly (AbortSignal.timeout inside AbortSignal.any) was collected and never fired.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const timers: NodeJS.Timeout[] = [setInterval(gc, 30)];
    const { port } = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/css' });
      timers.push(setInterval(() => res.write('a'), 40));
      res.on('close', () => timers.forEach(clearInterval));
    });
    const t0 = performance.now();
    const err = await vendorGet(`${ORIGIN}/slow.css`, {
      mirrors: new Map([[ORIGIN, `http://127.0.0.1:${port}`]]),
      maxBytes: 1 << 20,
      timeoutMs: 500,
      maxRedirects: 3,
      userAgent: 'test',
    }).then(
      () => null,
      (e: Error) => e,
    );
    for (const t of timers) clearInterval(t);
    expect(err!.message).toMatch(/^--vendor: cannot vendor https:\/\/fonts\.googleapis\.com\/slow\.css: .*0\.5 s/);
    expect(err!.message).not.toMatch(LIBRARY);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});

describe("vendorGet never reaches into the connected side's own network because a page named an address (SSRF)", () => {
  const direct = (url: string) => vendorGet(url, { mirrors: new Map(), maxBytes: 1 << 20, timeoutMs: 5_000, maxRedirects: 3, userAgent: 'test' });

  it('loopback, private, link-local and mapped addresses, literal or by a name that resolves to one: refused before any connection', async () => {
    let connections = 0;
    const { server, port } = await listen(() => {});
    server.on('connection', () => connections++);
    for (const host of [
      '127.0.0.1',
      'localhost',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '2130706433',
      '0x7f.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '[fe80::1]',
      '[fd00::1]',
      '0.0.0.0',
      '100.64.0.1',
    ]) {
      const err = await direct(`https://${host}:${port}/a.css`).then(
        () => null,
        (e: Error & { code?: string }) => e,
      );
      expect(err, host).not.toBeNull();
      expect((err as { code?: string }).code, host).toBe('AIRLOCK_VENDOR_PRIVATE');
      expect(err!.message, host).toMatch(/is not a public internet address .*--vendor-mirror/);
    }
    expect(connections).toBe(0);
  });

  it('a mirror the user named may be on the internal network, but its redirect to an internal address a page could pick is refused', async () => {
    let connections = 0;
    const inner = await listen((_req, res) => res.end('x'));
    inner.server.on('connection', () => connections++);
    const { port } = await listen((_req, res) => {
      res.writeHead(302, { location: `https://127.0.0.1:${inner.port}/secret` });
      res.end();
    });
    const err = await vendorGet(`${ORIGIN}/font.css`, {
      mirrors: new Map([[ORIGIN, `http://127.0.0.1:${port}`]]),
      maxBytes: 1 << 20,
      timeoutMs: 5_000,
      maxRedirects: 3,
      userAgent: 'test',
    }).then(
      () => null,
      (e: Error & { code?: string }) => e,
    );
    expect((err as { code?: string }).code).toBe('AIRLOCK_VENDOR_PRIVATE');
    expect(connections).toBe(0);
  });
});
