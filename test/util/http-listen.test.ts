import { describe, expect, it } from 'vitest';
import { createServer, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { gracefulClose, listenOn } from '../../src/util/http-listen.js';

/** How an airlock server stops: connections with no request in progress end at once, requests in progress finish. */
describe('gracefulClose', () => {
  it('silent and half-sent connections end at once; a request in progress finishes, then the server is closed', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let arrived!: () => void;
    const reached = new Promise<void>((r) => (arrived = r));
    const server = createServer((req, res) => {
      if (req.url === '/slow') {
        arrived();
        void gate.then(() => res.end('slow done'));
      } else res.end('quick');
    });
    const stop = gracefulClose(server);
    const url = await listenOn(server, 0, '127.0.0.1');
    const port = Number(new URL(url).port);
    const open = (first: string): Promise<Socket> =>
      new Promise((resolve) => {
        const s = connect(port, '127.0.0.1', () => {
          if (first) s.write(first);
          resolve(s);
        });
      });
    const ended = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));
    const silent = await Promise.all([1, 2, 3].map(() => open('')));
    const half = await Promise.all([1, 2, 3].map(() => open('GET / HTTP/1.1\r\nHost: x\r\n')));
    const slow = new Promise<string>((resolve, reject) => {
      const req = request(`${url}slow`, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end();
    });
    await reached; // the slow request is in progress before the server is told to stop
    let closed = false;
    const closing = stop(60_000).then(() => (closed = true));
    await Promise.all([...silent, ...half].map(ended)); // long before the 60 s grace
    expect(closed).toBe(false); // the request in progress still holds it
    release();
    expect(await slow).toBe('slow done');
    await closing;
    expect(closed).toBe(true);
  });
});
