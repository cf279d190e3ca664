import { ServerResponse, type IncomingMessage } from 'node:http';
import { safeQuery } from './respond.js';
import { DEFAULT_CSP } from './server.js';

/** The library server's own answers (library.ts): its pages, redirects and plain-text errors. */

const reachedUnder = new WeakMap<IncomingMessage, string>();

/** The path prefix (`/<domain>`) a request reached its site under, or null when its Host named the site. */
export function prefixOf(req: IncomingMessage): string | null {
  return reachedUnder.get(req) ?? null;
}

/**
 * Every response of the library server (its `createServer` class). A site reached by its path
 * prefix: its own redirects (`/a` → `/a/`) stay under the prefix, and its pages send their
 * address to this origin only (Referrer-Policy same-origin, where a site alone sends none), so
 * that a root-relative link of the page (`/guide`) is sent back under it. One class for every
 * response, the prefix a field: a writeHead set on some responses only would give Node's HTTP
 * code a second response shape to handle on every request (a few % more CPU a request in a
 * paired run after searches by prefix; the measurement was noisy).
 */
export class LibraryResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** The path prefix (`/<domain>`) its site was reached under, or null when its Host named the site. */
  prefix: string | null = null;

  override writeHead(status: number, a?: unknown, b?: unknown): this {
    const prefix = this.prefix;
    if (prefix !== null) {
      const headers = typeof a === 'string' ? b : a; // writeHead(status, [message,] headers)
      if (Array.isArray(headers)) {
        const h = headers as string[];
        const i = h.findIndex((x, k) => k % 2 === 0 && x.toLowerCase() === 'location');
        if (i >= 0 && h[i + 1]!.startsWith('/') && !h[i + 1]!.startsWith('//')) h[i + 1] = prefix + h[i + 1]!;
        const r = h.findIndex((x, k) => k % 2 === 0 && x.toLowerCase() === 'referrer-policy');
        if (r >= 0) h[r + 1] = 'same-origin';
      }
      if (this.hasHeader('referrer-policy')) this.setHeader('Referrer-Policy', 'same-origin');
    }
    return super.writeHead(status, a as never, b as never);
  }
}

/** The request reached its site under `prefix` (`/<domain>`). */
export function keepPrefix(res: LibraryResponse, prefix: string): void {
  reachedUnder.set(res.req, prefix);
  res.prefix = prefix;
}

const BASE = ['Content-Security-Policy', DEFAULT_CSP, 'X-Content-Type-Options', 'nosniff', 'Cache-Control', 'no-store'];

export function send(res: ServerResponse, status: number, type: string, body: string, extra: string[]): void {
  res.writeHead(status, [...BASE, ...extra, 'Content-Type', type, 'Content-Length', String(Buffer.byteLength(body))]);
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
export const text = (res: ServerResponse, status: number, body: string, extra: string[]) => send(res, status, 'text/plain; charset=utf-8', body, extra);
export const json = (res: ServerResponse, v: unknown) => send(res, 200, 'application/json; charset=utf-8', JSON.stringify(v), []);
export const redirect = (res: ServerResponse, location: string) => {
  const to = safeQuery(location); // visible ASCII only in a Location
  send(res, 308, 'text/plain; charset=utf-8', `Permanent Redirect: ${to}\n`, ['Location', to]);
};
