import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * node:http hands a CONNECT request to the server's 'connect' event and, with no listener there,
 * destroys the socket without a word. Our servers are not proxies: answer 405 with `Allow` and a
 * body (JSON when `json`), then close. Every server airlock runs installs this.
 */
export function refuseConnect(server: Server, allow = 'GET, HEAD', json = false): void {
  server.on('connect', (_req: unknown, socket: Duplex) => {
    const body = json ? JSON.stringify({ error: 'CONNECT is not supported: this is not a proxy' }) + '\n' : 'Method Not Allowed: this is not a proxy\n';
    const type = json ? 'application/json' : 'text/plain; charset=utf-8';
    socket.on('error', () => socket.destroy());
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\nAllow: ${allow}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
