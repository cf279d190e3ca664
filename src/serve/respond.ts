import type { ServerResponse } from 'node:http';
import type { LoadedIndex } from './version-index.js';

/** Small plain-text answers (400, 404 without a 404.html, 405, 414), with the version's headers. */
const REASONS: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  414: 'URI Too Long',
  500: 'Internal Server Error',
};

export function sendStatus(res: ServerResponse, idx: LoadedIndex, status: number, head: boolean, extra: string[] = []): void {
  sendText(res, idx, status, extra, (REASONS[status] ?? 'Error') + '\n', head);
}

/**
 * A message about a site as readers see it: where in its store (or library) `root` is, never
 * where that is on this server, nor where a link found in it points (any path of the host; the
 * log has it).
 */
export const forReaders = (root: string, message: string): string =>
  message
    .replaceAll(`store ${root} `, 'the store ')
    .replaceAll(root + '/', '')
    .replace(/ \(to "(?:[^"\\]|\\.)*"\)/g, '');

/** 503: the site cannot be served now (`why`, in words for readers); asked to retry. */
export function sendUnavailable(res: ServerResponse, idx: LoadedIndex, why: string, head: boolean): void {
  sendText(res, idx, 503, ['Retry-After', '5'], `Service Unavailable: this site cannot be served: ${why}\n`, head);
}

/** A short plain-text answer of this server (never cached), with the version's base headers and `extra`. */
function sendText(res: ServerResponse, idx: LoadedIndex, status: number, extra: string[], body: string, head: boolean): void {
  res.writeHead(status, [
    ...idx.base,
    ...extra,
    'Cache-Control',
    'no-cache',
    'Content-Type',
    'text/plain; charset=utf-8',
    'Content-Length',
    String(Buffer.byteLength(body)),
  ]);
  res.end(head ? undefined : body);
}

/** Keep a query string verbatim in a Location, but never let a byte through that is not visible ASCII. */
export function safeQuery(q: string): string {
  return /^[\x21-\x7e]*$/.test(q) ? q : q.replace(/[^\x21-\x7e]/g, (c) => '%' + (c.charCodeAt(0) & 0xff).toString(16).toUpperCase().padStart(2, '0'));
}

/** A single 308 (RFC 9110 §15.4.9: method and body kept) to a path of this site. */
export function sendRedirect(res: ServerResponse, idx: LoadedIndex, location: string, query: string, head: boolean): void {
  const to = query === '' ? location : `${location}?${safeQuery(query)}`;
  sendText(res, idx, 308, ['Location', to], `Permanent Redirect: ${to}\n`, head);
}
