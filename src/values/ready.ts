import { Hono } from 'hono';
import { indexOf, type AppEnv } from '../serve/index.js';

/**
 * `GET /_airlock/ready`: mounted only on the real server, which exists only once a version can be
 * served, so it answers 200 — with the fallback warning in the body when the server is serving an
 * older version because the bundle could not be installed (loud, for whoever reads the probe).
 */
export function readyRoutes(warning: () => string[] | null): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/_airlock/ready', (c) => c.json({ status: 'ready', version: indexOf(c).version, ...(warning() ? { warning: warning() } : {}) }));
  return app;
}
