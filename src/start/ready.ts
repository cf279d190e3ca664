import { Hono } from 'hono';
import { indexOf, type AppEnv } from '../serve/app.js';
import { capturedBroken } from '../serve/handler.js';

/**
 * `GET /_airlock/ready`: mounted only on the real server, which exists only once a version can be
 * served, so it answers 200 — with the fallback warning in the body when the server is serving an
 * older version because the bundle could not be installed (loud, for whoever reads the probe),
 * and the bundle's state while it downloads behind the version served (`bundle`). A version
 * whose store was damaged under the server (its pages answer 503) is 503 here too, naming why.
 */
export function readyRoutes(
  warning: () => string[] | null,
  follow: (() => object | null) | null = null,
  bundle: (() => object | null) | null = null,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // A follower stays ready whatever its mirror does (it serves what it has): `follow` says why it
  // has not switched (mirror unreachable, a version refused, a download failing).
  app.get('/_airlock/ready', (c) => {
    const f = follow?.() ?? null;
    const b = bundle?.() ?? null;
    // Its store damaged under it (a folder swapped for a link, the version removed): its pages answer 503, so it is not ready.
    const damaged = capturedBroken(c.env.incoming);
    if (damaged !== null) return c.json({ status: 'damaged', version: indexOf(c).version, problem: damaged }, 503, { 'Retry-After': '5' });
    return c.json({
      status: 'ready',
      version: indexOf(c).version,
      ...(warning() ? { warning: warning() } : {}),
      ...(f ? { follow: f } : {}),
      ...(b ? { bundle: b } : {}),
    });
  });
  return app;
}
