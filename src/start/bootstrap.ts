import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { refuseConnect } from '../util/http-connect.js';

/**
 * The listener that holds the port while a bundle downloads at start-up: health answers 200 (the
 * process is alive: a liveness probe must not kill a pod in the middle of a long download), ready
 * answers 503 (send no traffic yet), everything else 503 with Retry-After. Replaced by the real
 * server on the same port once a version can be served.
 */
export interface Bootstrap {
  port: number;
  url: string;
  close(): Promise<void>;
}

export function startBootstrap(port: number, host: string, phase: () => string): Promise<Bootstrap> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      const text = JSON.stringify(body) + '\n';
      res.writeHead(status, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text),
        'Cache-Control': 'no-store',
        ...(status === 503 ? { 'Retry-After': '5' } : {}),
      });
      res.end(req.method === 'HEAD' ? undefined : text);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return json(405, { error: `method ${req.method} not allowed: GET and HEAD only` });
    }
    if (path === '/_airlock/health') return json(200, { status: 'ok', version: null, phase: phase() });
    if (path === '/_airlock/ready') return json(503, { status: 'starting', phase: phase() });
    json(503, { error: `starting: ${phase()}` });
  });
  refuseConnect(server, 'GET, HEAD', true);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      resolve({
        port: a.port,
        url: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/`,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    });
  });
}
