import { createServer, type Server } from 'node:http';
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
const get = (port: number) => vendorGet(`${ORIGIN}/font.css`, { mirrors: new Map([[ORIGIN, `http://127.0.0.1:${port}`]]), maxBytes: 1 << 20, timeoutMs: 5_000, maxRedirects: 3, userAgent: 'test' });
const LIBRARY = /ECONNREFUSED|ECONNRESET|UND_ERR|other side closed|fetch failed|SocketError|\bconnect E/;

describe('vendorGet network failures', () => {
  it('a refused connection: in words, naming where', async () => {
    const { server, port } = await listen(() => {});
    servers.pop();
    await new Promise((r) => server.close(r));
    const err = await get(port).then(() => null, (e: Error) => e);
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
    const err = await get(port).then(() => null, (e: Error) => e);
    expect(err!.message).toMatch(/^--vendor: cannot vendor https:\/\/fonts\.googleapis\.com\/font\.css: reading the body failed: \S/);
    expect(err!.message).not.toMatch(LIBRARY);
  });
});
