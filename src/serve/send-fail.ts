import { rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { DamagedFileError } from './body-cache.js';
import type { SendContext } from './send-file.js';

/**
 * A file of the version that could not be served, answered: gone (503, retry: the version may be
 * switching or removed), other bytes than its package's or its index's (503: the store is
 * damaged; a derived cache file is removed and rebuilt), anything else 500. Headers already sent:
 * the connection is cut, so the reader never takes a torn body for a whole one.
 */
export function fail(res: ServerResponse, ctx: SendContext, err: unknown, file: string, base: string[], derived = true): void {
  ctx.onError(err, file);
  // A damaged cache file (derived data, named by the index, never by the URL) is removed and the version reloaded, which
  // rebuilds it; until then its requests fail rather than serve it. A site file is the store's: never removed.
  if (err instanceof DamagedFileError && derived)
    void rm(file, { force: true })
      .catch(() => {})
      .then(() => ctx.onDamaged?.());
  else ctx.onMissing?.(); // any other failure (a transform names no errno) may be the version gone: a stat says
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const gone = ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? ''); // 503 to retry: the version may be switching or gone
  const altered = err instanceof DamagedFileError && !derived;
  const body = gone
    ? "Service Unavailable: this page's file is gone from the store\n"
    : altered
      ? 'Service Unavailable: this file differs from its package (the store is damaged)\n'
      : 'Internal Server Error\n';
  const more = gone || altered ? ['Retry-After', '5'] : [];
  res.writeHead(gone || altered ? 503 : 500, [
    ...base,
    'Content-Type',
    'text/plain; charset=utf-8',
    'Content-Length',
    String(body.length),
    'Cache-Control',
    'no-store',
    ...more,
  ]);
  res.end(body);
}
