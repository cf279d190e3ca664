import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { safeQuery } from './respond.js';
import { DEFAULT_CSP } from './server.js';

/** The library server's own answers (library.ts): its pages, redirects and plain-text errors. */

const reachedUnder = new WeakMap<IncomingMessage, string>();

/** The path prefix (`/<domain>`) a request reached its site under, or null when its Host named the site. */
export function prefixOf(req: IncomingMessage): string | null {
  return reachedUnder.get(req) ?? null;
}

/**
 * A site reached by its path prefix: its own redirects (`/a` → `/a/`) stay under the prefix, and
 * its pages send their address to this origin only (Referrer-Policy same-origin, where a site
 * alone sends none), so that a root-relative link of the page (`/guide`) is sent back under it.
 */
export function keepPrefix(res: ServerResponse, prefix: string): void {
  reachedUnder.set(res.req, prefix);
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: OutgoingHttpHeaders | string[]) => ServerResponse;
  res.writeHead = ((status: number, headers?: OutgoingHttpHeaders | string[]) => {
    if (Array.isArray(headers)) {
      const i = headers.findIndex((h, k) => k % 2 === 0 && h.toLowerCase() === 'location');
      if (i >= 0 && headers[i + 1]!.startsWith('/') && !headers[i + 1]!.startsWith('//')) headers[i + 1] = prefix + headers[i + 1]!;
      const r = headers.findIndex((h, k) => k % 2 === 0 && h.toLowerCase() === 'referrer-policy');
      if (r >= 0) headers[r + 1] = 'same-origin';
    }
    if (res.hasHeader('referrer-policy')) res.setHeader('Referrer-Policy', 'same-origin');
    return writeHead(status, headers);
  }) as ServerResponse['writeHead'];
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
