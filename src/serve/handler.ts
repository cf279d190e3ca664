import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseTarget } from './request-path.js';
import { sendStatus, sendRedirect, sendUnavailable } from './respond.js';
import { sendFile, type SendContext } from './send-file.js';
import { notFoundPage, type LoadedIndex } from './version-index.js';

const VENDOR_PREFIX = '/_airlock/vendor/';
import type { AccessLog } from './access-log.js';
import type { ServeMetrics } from './metrics.js';
import type { SkewGuard } from './skew.js';

/**
 * What a request handed to the app captured at its start: its version index, and why the
 * version's files cannot be served now (HandlerDeps.broken), for airlock's own routes to report.
 * Kept beside the request, not on it: a property added to some requests gives Node's stream and
 * HTTP code a second request shape to handle on every request after (measured: a few % more CPU a
 * request for a server that has answered searches).
 */
const captured = new WeakMap<IncomingMessage, { index: LoadedIndex; broken: string | null }>();

/** `req` is handed to the app with the version index it captured and why that version cannot be served (null: it can). */
export function capture(req: IncomingMessage, index: LoadedIndex, broken: string | null): void {
  captured.set(req, { index, broken });
}
/** The version index `req` captured when the fast path handed it to the app, or undefined. */
export const capturedIndex = (req: IncomingMessage): LoadedIndex | undefined => captured.get(req)?.index;
/** Why the version's files could not be served when `req` was handed to the app, or null. */
export const capturedBroken = (req: IncomingMessage): string | null => captured.get(req)?.broken ?? null;

export interface HandlerDeps {
  current(): LoadedIndex;
  send: SendContext;
  /** Routes beyond static files (`/_airlock/*`, relays): reached only under these path prefixes. */
  app: (req: IncomingMessage, res: ServerResponse) => void;
  appPrefixes: readonly string[];
  appRoute: ((method: string, path: string) => boolean) | null;
  accessLog: AccessLog | null;
  metrics?: ServeMetrics | null;
  /** Skew protection (skew.ts): a non-HTML file of the next or a recently retired version. */
  skew?: SkewGuard | null;
  /** Why the version's files cannot be read now (in words for readers), or null: its files answer 503, airlock's own routes still work. */
  broken?: () => string | null;
}

/**
 * The static fast path: a plain node:http listener (hono's adapter costs ~40% here). The index is
 * captured once, so a version switch mid-request cannot mix versions. Paths are decoded strictly
 * once and only looked up in the index Map: no file-system path is built from the URL.
 */
export function createHandler(d: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const prefixes = d.appPrefixes;
  const log = d.accessLog;
  const metrics = d.metrics ?? null;
  const skew = d.skew ?? null;
  const broken = d.broken ?? null;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const idx = d.current();
    if (log !== null) log(req, res, idx.version);
    const method = req.method;
    const head = method === 'HEAD';
    const t = parseTarget(req.url ?? '');
    const why = broken === null ? null : broken();
    if (why !== null && !(t.ok && t.path.startsWith('/_airlock/') && !t.path.startsWith(VENDOR_PREFIX))) return sendUnavailable(res, idx, why, head);
    if (!t.ok) {
      // A miss with empty segments (`/guide//nope`) is still a miss under /guide/: its nearest 404.html.
      const nf = t.miss === undefined || (method !== 'GET' && !head) ? null : notFoundPage(idx, t.miss);
      return nf !== null ? sendFile(req, res, idx, nf, head, d.send, 404) : sendStatus(res, idx, t.status, head);
    }
    if (t.path.startsWith(VENDOR_PREFIX)) {
      // Vendoring: a vendored file is a static file of the version (index lookup only, like any other).
      if (method !== 'GET' && !head) return sendStatus(res, idx, 405, false, ['Allow', 'GET, HEAD']);
      const v = idx.routes.get(t.path);
      return v?.kind === 'file' ? sendFile(req, res, idx, v.file, head, d.send) : sendStatus(res, idx, 404, head);
    }
    if (prefixes.some((p) => t.path.startsWith(p)) || (d.appRoute !== null && d.appRoute(method ?? '', t.path))) {
      capture(req, idx, why);
      for (let i = 0; i < idx.base.length; i += 2) res.setHeader(idx.base[i]!, idx.base[i + 1]!);
      return d.app(req, res);
    }
    if (method !== 'GET' && !head) return sendStatus(res, idx, 405, false, ['Allow', 'GET, HEAD']);
    const route = idx.routes.get(t.path);
    if (route === undefined) {
      const other = skew === null ? null : skew.find(t.path);
      if (other !== null) return sendFile(req, res, other.idx, other.file, head, d.send);
      const nf = notFoundPage(idx, t.path);
      if (nf !== null) return sendFile(req, res, idx, nf, head, d.send, 404);
      return sendStatus(res, idx, 404, head);
    }
    if (route.kind === 'redirect') return sendRedirect(res, idx, route.location, t.query, head);
    sendFile(req, res, idx, route.file, head, d.send);
  };
  if (metrics === null) return handle;
  // Counted after the handler returns: most responses have ended by then (see metrics.ts).
  return (req, res) => {
    const t0 = performance.now();
    handle(req, res);
    metrics.done(res, t0);
  };
}
