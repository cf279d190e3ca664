import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Set when the connection closed before the response finished (the relay aborted). */
  aborted: boolean;
  closedAt: number | null;
}

/** A tiny stand-in upstream whose behaviour each test scripts, recording what the relay sent. */
export async function fakeUpstream(handle: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: '', aborted: false, closedAt: null };
    seen.push(s);
    res.on('close', () => {
      s.closedAt = Date.now();
      s.aborted = !res.writableFinished;
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      s.body = Buffer.concat(chunks).toString('utf8');
      handle(req, res, s);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** An endless 200 of `contentType`: `first`, then `chunk` over and over, as fast as the socket takes it. */
export function endlessAnswer(res: ServerResponse, contentType: string, chunk: string, first = ''): void {
  res.writeHead(200, { 'content-type': contentType });
  if (first) res.write(first);
  const pump = () => {
    while (res.write(chunk)) {
      /* until the socket pushes back */
    }
  };
  res.on('drain', pump);
  pump();
}

/** A port nobody listens on (bound, then released). */
export async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
