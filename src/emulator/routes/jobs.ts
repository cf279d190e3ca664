import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { StartExportRequestSchema } from '../../upstream/index.js';
import { describeZodError } from '../../upstream/describe.js';
import { apiGuard, type Env } from '../auth.js';
import { knownDomain, type EmulatorContext } from '../context.js';
import { jobView } from '../lifecycle.js';
import { listFiles } from '../sites.js';

/** `POST /v1/static-export/jobs` and `GET /v1/static-export/jobs/:jobId` (issue 4). */
export function jobRoutes(ctx: EmulatorContext): Hono<Env> {
  const app = new Hono<Env>();
  const guard = apiGuard(ctx, 'admin');

  app.post('/', guard, async (c) => {
    const body = StartExportRequestSchema.safeParse(await c.req.json().catch(() => undefined));
    if (!body.success) return c.json({ error: `invalid request: ${describeZodError(body.error)}` }, 400);
    const { domain } = body.data;
    if (!knownDomain(ctx, domain)) return c.json({ error: `domain not found: ${domain}` }, 404);
    const site = Object.hasOwn(ctx.sites, domain) ? ctx.sites[domain] : undefined;
    const pages = site ? (await listFiles(site.dir)).filter((p) => p.endsWith('.html')).length : null;
    const job = { jobId: `job_${randomBytes(8).toString('hex')}`, domain, createdAt: ctx.now(), fail: ctx.state.faults.failingDomains.includes(domain), pages };
    ctx.state.jobs.set(job.jobId, job);
    // The live service answers 202 with the whole job, not just {jobId}.
    return c.json(jobView(job, job.createdAt, ctx.timings), 202);
  });

  app.get('/:jobId', guard, (c) => {
    const job = ctx.state.jobs.get(c.req.param('jobId'));
    if (!job) return c.json({ error: `job not found: ${c.req.param('jobId')}` }, 404);
    return c.json(jobView(job, ctx.now(), ctx.timings));
  });
  return app;
}
