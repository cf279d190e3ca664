import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { gracefulClose, listenOn } from '../../src/util/http-listen.js';
import { createTlsServer } from '../../src/serve/tls.js';
import { makeCert } from '../helpers/tls.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;
/** A server of each kind airlock runs, with how it stops and how a client connects to it. */
type Rig = { url: string; stop: (graceMs: number) => Promise<void>; open: () => Promise<Socket>; get: typeof request; done: () => Promise<void> };

async function plain(listener: Listener): Promise<Rig> {
  const server = createServer(listener);
  const stop = gracefulClose(server);
  const url = await listenOn(server, 0, '127.0.0.1');
  const port = Number(new URL(url).port);
  const open = () =>
    new Promise<Socket>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
    });
  return { url, stop, open, get: request, done: async () => {} };
}

/** `serve --tls-cert`: HTTP/1.1 over TLS (ALPN), the connections a keep-alive client leaves open. */
async function tls(listener: Listener): Promise<Rig> {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-graceful-tls-'));
  const files = makeCert(dir, 'graceful');
  const t = createTlsServer({ cert: await readFile(files.cert), key: await readFile(files.key) }, null, listener, () => {});
  const url = await listenOn(t.server, 0, '127.0.0.1', 'https');
  const port = Number(new URL(url).port);
  const open = () =>
    new Promise<Socket>((resolve) => {
      const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => resolve(s));
    });
  const get = ((u: string, cb: (res: IncomingMessage) => void) => httpsRequest(u, { rejectUnauthorized: false, agent: false }, cb)) as typeof request;
  return { url, stop: (g) => t.close(g), open, get, done: () => rm(dir, { recursive: true, force: true }) };
}

/** How an airlock server stops: connections with no request in progress end at once, requests in progress finish. */
describe('a server that stops', () => {
  for (const [kind, make] of [
    ['plain HTTP (gracefulClose)', plain],
    ['HTTP/1.1 over TLS', tls],
  ] as const)
    it(`${kind}: silent and half-sent connections end at once; a request in progress finishes, then the server is closed`, async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let arrived!: () => void;
      const reached = new Promise<void>((r) => (arrived = r));
      const rig = await make((req, res) => {
        if (req.url === '/slow') {
          arrived();
          void gate.then(() => res.end('slow done'));
        } else res.end('quick');
      });
      try {
        const opened = async (first: string) => {
          const s = await rig.open();
          if (first) s.write(first);
          return s;
        };
        const ended = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));
        const silent = await Promise.all([1, 2, 3].map(() => opened('')));
        const half = await Promise.all([1, 2, 3].map(() => opened('GET / HTTP/1.1\r\nHost: x\r\n')));
        const slow = new Promise<string>((resolve, reject) => {
          const req = rig.get(`${rig.url}slow`, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve(body));
          });
          req.on('error', reject);
          req.end();
        });
        await reached; // the slow request is in progress before the server is told to stop
        let closed = false;
        const closing = rig.stop(60_000).then(() => (closed = true));
        await Promise.all([...silent, ...half].map(ended)); // long before the 60 s grace
        expect(closed).toBe(false); // the request in progress still holds it
        release();
        expect(await slow).toBe('slow done');
        await closing;
        expect(closed).toBe(true);
      } finally {
        await rig.done();
      }
    });
});
