import type { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import { holdTickShape } from './gc.js';

/** Listen on `host:port` (0: any free port); resolves with the address as a URL, an IPv6 host in brackets. */
export function listenOn(server: NetServer, port: number, host: string, scheme = 'http'): Promise<string> {
  holdTickShape(); // a server runs for long: keep Node's fast path for its ticks (gc.ts says why)
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const a = server.address() as AddressInfo;
      resolve(`${scheme}://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/`);
    });
  });
}

/**
 * Each HTTP/1 connection of `server` with its requests in progress, for a server that stops
 * gracefully: `idle(s)` is called when the last request in progress of `s` ends while `closing()`.
 * `on` is the event of a new connection ('secureConnection' for TLS). HTTP/2 streams are not
 * counted: their sessions close gracefully on their own.
 *
 * One entry a connection, its requests counted in place: a request changes no table. A map whose
 * entries came and went with every request would rebuild its table every few dozen requests, in
 * the old generation once the map lives there, for the next full collection to sweep (about 140
 * bytes a request, several % of a busy server's CPU once its heap is large).
 */
export function requestsInProgress(
  server: EventEmitter,
  on: 'connection' | 'secureConnection',
  closing: () => boolean,
  idle: (s: Socket) => void,
): ReadonlyMap<Socket, { busy: number }> {
  const sockets = new Map<Socket, { busy: number }>();
  server.on(on, (s: Socket) => {
    sockets.set(s, { busy: 0 });
    s.once('close', () => sockets.delete(s));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const s = req.socket;
    const c = req.httpVersionMajor === 1 ? sockets.get(s) : undefined;
    if (c === undefined) return; // an HTTP/2 stream, or not a connection this server saw open
    c.busy++;
    res.once('close', () => {
      c.busy--;
      if (closing() && c.busy <= 0) idle(s); // its last answer is out: nothing more is taken from it
    });
  });
  return sockets;
}

/** What was written still reaches the reader (an answer in the socket's buffer), then it is gone. */
export const finish = (s: Socket) => void s.end(() => s.destroy());

/**
 * How an HTTP server stops (SIGTERM): it stops accepting, ends at once every connection that has
 * no request in progress (idle keep-alive, connected but silent, a request line or headers only
 * half sent: a reader loses nothing), lets the requests in progress finish, and cuts those still
 * running after `graceMs`. Call at creation: it counts the requests of each connection.
 */
export function gracefulClose(server: Server): (graceMs: number) => Promise<void> {
  let closing = false;
  const sockets = requestsInProgress(server, 'connection', () => closing, finish);
  return async (graceMs) => {
    closing = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const [s, c] of sockets) if (c.busy <= 0) finish(s);
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    await closed;
    clearTimeout(timer);
  };
}
