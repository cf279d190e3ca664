/**
 * Deterministic "the client left before the answer" (a reader's abort, a replica shutting down):
 * a server on 127.0.0.1 whose handler runs only once the response is closed, and a client that
 * sends a request and hangs up. Plus a count of this process's open descriptors of some files,
 * to check that a handler that had nobody to answer closed what it opened.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readlink } from 'node:fs/promises';
import { until } from './wait.js';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;
export interface HangUpServer {
  port: number;
  /** How many requests have reached the server. */
  requests(): number;
  close(): Promise<void>;
}

/** `late` runs once the client has hung up (the response is destroyed by then); `answered`, when given, serves later requests at once. */
export async function serverAfterHangUp(late: Handler, answered?: () => Handler | undefined): Promise<HangUpServer> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    const now = answered?.();
    if (now) now(req, res);
    else res.once('close', () => late(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, requests: () => requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Send a GET for `path` and hang up, without reading an answer, once the server has the request
 * (a fixed delay was not always enough on a busy machine: hanging up before the request was
 * written meant the handler never ran, and the test waited for its timeout).
 */
export async function requestAndHangUp(server: HangUpServer, path: string): Promise<void> {
  const before = server.requests();
  const client = request({ host: '127.0.0.1', port: server.port, path });
  client.on('error', () => {});
  client.end();
  await until(() => server.requests() !== before, { timeoutMs: 10_000, intervalMs: 10 }).catch(() => undefined);
  client.destroy();
  if (server.requests() === before) throw new Error(`GET ${path} did not reach the server within 10 s`);
}

/** `p`, or a rejection naming `what` after `ms`: a test waits for a handler a bounded time, then says what did not happen. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** How many descriptors of this process point at a file `match` accepts, after a bounded wait for them to close (closes are asynchronous). */
export async function openDescriptors(match: (target: string) => boolean): Promise<number> {
  const count = async () =>
    (await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')))).filter(match).length;
  await until(async () => (await count()) === 0, { timeoutMs: 1000, intervalMs: 20 }).catch(() => undefined);
  return count();
}
