import { Hono } from 'hono';
import { z } from 'zod';
import { indexOf, type AppEnv } from '../app.js';
import { MAX_PAGE_SIZE } from '../../search/engine.js';
import type { LocalSearch } from '../../search/service.js';
import { readJsonBody } from '../../util/json-body.js';
import { describeZodError } from '../../upstream/describe.js';

/**
 * `POST /_airlock/search/{domain}` — the service's published search shape (`{query, pageSize,
 * filter}` → `[{content, path, metadata:{title, …}}]`; `filter.language` and `page`, the reader's
 * language and current page, order copies of a page across languages and versions), answered from the served version's local
 * index, on this origin. Untrusted input: the body is bounded (SEARCH_MAX_BODY) before it is
 * parsed, must be application/json (a cross-site form cannot send it without a preflight we never
 * grant), and is validated; every refusal is a 4xx with `{error}` naming the problem. While the
 * index is being built: 503 + Retry-After + `{error, building: true}`.
 */
export const SEARCH_PATH = '/_airlock/search/:domain';
export const SEARCH_MAX_BODY = 8 * 1024;

const Body = z.looseObject({
  query: z.string().trim().min(1).max(500),
  pageSize: z.number().int().min(1).max(MAX_PAGE_SIZE).nullish(),
  filter: z
    .looseObject({
      path: z.string().max(300).regex(/^\//, 'must start with /').nullish(),
      // the reader's language: its pages first, other languages' copies of a page dropped
      language: z
        .string()
        .max(35)
        .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$/, 'must be a language tag such as en or zh-CN')
        .nullish(),
    })
    .nullish(),
  // the page the reader is on: its version's (and language's) copies of a page first
  page: z.string().max(2000).regex(/^\//, 'must start with /').nullish(),
});

export function searchRoutes(search: LocalSearch): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post(SEARCH_PATH, async (c) => {
    const idx = indexOf(c);
    const domain = c.req.param('domain');
    if (idx.domain !== '' && domain !== idx.domain) {
      return c.json({ error: `no such docs domain ${JSON.stringify(domain.slice(0, 200))}: this server serves ${JSON.stringify(idx.domain)}` }, 404);
    }
    const body = await readJsonBody(c.req.raw, SEARCH_MAX_BODY);
    if (!body.ok) return c.json({ error: body.error }, body.status);
    const v = Body.safeParse(body.value);
    if (!v.success) {
      return c.json({ error: `invalid search request: ${describeZodError(v.error)}` }, 400);
    }
    const a = await search.query(idx.source, v.data.query, {
      pageSize: v.data.pageSize ?? 10,
      pathPrefix: v.data.filter?.path ?? undefined,
      language: v.data.filter?.language ?? undefined,
      page: v.data.page ?? undefined,
    });
    if (a.status === 'ready') return c.json(a.hits);
    c.header('Retry-After', String(a.retryAfterSec));
    if (a.status === 'building') return c.json({ error: `the search index of ${idx.version} is being built; retry shortly`, building: true }, 503);
    return c.json({ error: `search is unavailable: ${a.error}`, building: false }, 503);
  });
  return app;
}
