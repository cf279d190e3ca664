import { Hono, type Context } from 'hono';
import { stream } from 'hono/streaming';
import { getConnInfo } from '@hono/node-server/conninfo';
import { AssistantRequestSchema } from '../../upstream/schemas/assistant.js';
import { answerChunks } from '../answer.js';
import { apiGuard, type Env } from '../auth.js';
import { knownDomain, type EmulatorContext } from '../context.js';
import { rank } from '../text.js';
import { describeIssue, describeZodError } from '../../upstream/describe.js';
import { requestJson } from '../../util/json-body.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The public discovery endpoints (assistant key `svc_dsc_`): the assistant's message stream and
 * search, both answering from the fixture site's own pages. Limits per organisation per hour and
 * per client IP per day, as the service documents (fixed windows, 429 + Retry-After).
 */
export function assistantRoutes(ctx: EmulatorContext): Hono<Env> {
  const app = new Hono<Env>();
  const guard = apiGuard(ctx, 'assistant');

  const limited = (c: Context<Env>): Response | null => {
    const now = ctx.now();
    let ip = 'unknown';
    try {
      ip = getConnInfo(c).remote.address ?? 'unknown';
    } catch {
      // app.request() in unit tests has no socket
    }
    const wait = ctx.state.hit(`org:${c.get('org')}`, ctx.limits.perOrgPerHour, HOUR, now) ?? ctx.state.hit(`ip:${ip}`, ctx.limits.perIpPerDay, DAY, now);
    if (wait === null) return null;
    c.header('Retry-After', String(Math.ceil(wait / 1000)));
    return c.json({ error: 'rate limit exceeded' }, 429);
  };

  app.post('/assistant/:domain/message', guard, async (c) => {
    const domain = c.req.param('domain');
    if (!knownDomain(ctx, domain)) return c.json({ error: `domain not found: ${domain}` }, 404);
    const got = await requestJson(c.req.raw);
    if (!got.ok) return c.json({ error: got.error }, got.status);
    const parsed = AssistantRequestSchema.safeParse(got.value);
    if (!parsed.success) {
      const problems = parsed.error.issues.slice(0, 20).map((i) => ({ path: i.path.map(String).join('.'), message: describeIssue(i) }));
      return c.json({ error: `invalid request: ${describeZodError(parsed.error)}`, problems }, 400);
    }
    const over = limited(c);
    if (over) return over;
    const chunks = answerChunks(parsed.data, await ctx.pages(domain), domain);
    c.header('content-type', 'text/event-stream');
    c.header('cache-control', 'no-cache');
    c.header('x-vercel-ai-ui-message-stream', 'v1');
    c.header('x-accel-buffering', 'no');
    return stream(c, async (s) => {
      for (const chunk of chunks) {
        await s.write(`data: ${JSON.stringify(chunk)}\n\n`);
        if (ctx.streamDelayMs) await s.sleep(ctx.streamDelayMs);
      }
      await s.write('data: [DONE]\n\n');
    });
  });

  const search = async (c: Context<Env>, q: string) => {
    const domain = c.req.param('domain')!;
    if (!knownDomain(ctx, domain)) return c.json({ error: `domain not found: ${domain}` }, 404);
    const over = limited(c);
    if (over) return over;
    const hits = rank(await ctx.pages(domain), q, 10);
    return c.json({ query: q, results: hits.map((h) => ({ title: h.page.title, path: h.page.path, url: h.page.url, snippet: h.snippet, score: h.score })) });
  };
  app.get('/search/:domain', guard, (c) => search(c, c.req.query('q') ?? ''));
  app.post('/search/:domain', guard, async (c) => {
    const got = await requestJson(c.req.raw);
    if (!got.ok) return c.json({ error: got.error }, got.status);
    const body = (got.value ?? {}) as { query?: unknown };
    return search(c, c.req.query('q') ?? (typeof body.query === 'string' ? body.query : ''));
  });
  return app;
}
