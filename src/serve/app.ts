import { Hono, type Context } from 'hono';
import type { IncomingMessage } from 'node:http';
import type { LoadedIndex } from './version-index.js';
import { capturedIndex } from './handler.js';
import { allowTable } from './allow.js';
import { VENDOR_MAP_SCRIPT } from '../features/index.js';
import { vendorMapScript } from './vendor-map.js';
import type { VersionSource } from './source.js';

/**
 * The slow-path routes: `/_airlock/*` here, and whatever other modules mount (relays, mirror).
 * Reached from the node:http fast path only for reserved prefixes, with the request's captured
 * version index attached, so hono routes answer from the same version as the rest of the response.
 */
export type AppEnv = { Bindings: { incoming: IncomingMessage } };

/** The version index this request captured at its start. */
export function indexOf(c: Context<AppEnv>): LoadedIndex {
  const idx = capturedIndex(c.env.incoming);
  if (!idx) throw new Error('request reached the airlock app without a version index');
  return idx;
}

export interface AppOptions {
  /** The effective feature flags for `/_airlock/features` (src/features). */
  features: () => unknown;
  /** Routes of other modules, mounted after ours. */
  extra?: Hono<AppEnv>;
  /** `GET /_airlock/metrics` (Prometheus text format) when given. */
  metrics?: { text(): Promise<string>; contentType: string } | null;
}

export function buildApp(o: AppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  });
  app.get('/_airlock/health', (c) => c.json({ status: 'ok', version: indexOf(c).version }));
  app.get('/_airlock/version', (c) => {
    const i = indexOf(c);
    return c.json({ version: i.version, domain: i.domain, importedAt: i.importedAt, pageCount: i.pageCount });
  });
  app.get('/_airlock/features', (c) => c.json(o.features() as object));
  // Vendoring: run-time loads of the version's vendored URLs go to the copies (vendor-map.ts).
  const mapScripts = new WeakMap<VersionSource, string | null>();
  app.get(VENDOR_MAP_SCRIPT, (c) => {
    const src = indexOf(c).source;
    if (!mapScripts.has(src)) mapScripts.set(src, vendorMapScript(src.vendor));
    const js = mapScripts.get(src) ?? null;
    return js === null
      ? c.json({ error: 'this version carries no vendored files' }, 404)
      : c.body(js, 200, { 'Content-Type': 'text/javascript; charset=utf-8' });
  });
  const metrics = o.metrics;
  if (metrics) app.get('/_airlock/metrics', async (c) => c.body(await metrics.text(), 200, { 'Content-Type': metrics.contentType }));
  if (o.extra) app.route('/', o.extra);
  // Serving rules: GET and HEAD; other methods get 405 with Allow (hono would say 404). A
  // path some route answers with other methods (mirror, relays) lists those; anything else under
  // /_airlock/ is GET/HEAD only.
  let allowed: ((path: string) => string[]) | null = null;
  app.notFound((c) => {
    const { method, path } = c.req;
    allowed ??= allowTable(app.routes);
    const methods = allowed(path);
    if (methods.length === 0 && path.startsWith('/_airlock/') && method !== 'GET' && method !== 'HEAD') methods.push('GET', 'HEAD');
    if (methods.length > 0 && !methods.includes(method)) {
      c.header('Allow', methods.join(', '));
      return c.json({ error: `method ${method} not allowed on ${path}; allowed: ${methods.join(', ')}` }, 405);
    }
    return c.json({ error: `no such route: ${method} ${path}` }, 404);
  });
  return app;
}
