import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { StartExportRequestSchema } from '../../upstream/schemas/export-job.js';
import { describeZodError } from '../../upstream/describe.js';
import { requestJson } from '../../util/json-body.js';
import { apiGuard, exportEnabled, type Env } from '../auth.js';
import { knownDomain, type EmulatorContext } from '../context.js';
import { jobView } from '../lifecycle.js';
import { listFiles } from '../sites.js';

/**
 * `POST /v1/static-export/jobs` → 202 with the whole job record, and `GET
 * /v1/static-export/jobs/:jobId` → the same shape (the service's API as published).
 * Job ids look like the service's: `se_` and 16 hex digits.
 */
export function jobRoutes(ctx: EmulatorContext): Hono<Env> {
  const app = new Hono<Env>();
  const guard = apiGuard(ctx, 'admin');
  const enabled = exportEnabled(ctx);

  app.post('/', guard, enabled, async (c) => {
    const got = await requestJson(c.req.raw);
    if (!got.ok) return c.json({ error: got.error }, got.status);
    const body = StartExportRequestSchema.safeParse(got.value);
    if (!body.success) return c.json({ error: `invalid request: ${describeZodError(body.error)}` }, 400);
    const { domain, version, paths } = body.data;
    if (!knownDomain(ctx, domain)) return c.json({ error: `domain not found: ${domain}` }, 404);
    const site = Object.hasOwn(ctx.sites, domain) ? ctx.sites[domain] : undefined;
    const pages = site ? (await listFiles(site.dir)).filter((p) => p.endsWith('.html')).length : null;
    const job = {
      jobId: `se_${randomBytes(8).toString('hex')}`,
      domain,
      createdAt: ctx.now(),
      fail: ctx.state.faults.failingDomains.includes(domain),
      pages,
      version: version ?? undefined,
      paths: paths ?? undefined,
    };
    ctx.state.jobs.set(job.jobId, job);
    return c.json(jobView(job, job.createdAt, ctx.timings), 202);
  });

  app.get('/:jobId', guard, enabled, (c) => {
    const job = ctx.state.jobs.get(c.req.param('jobId'));
    if (!job) return c.json({ error: `job not found: ${c.req.param('jobId')}` }, 404);
    return c.json(jobView(job, ctx.now(), ctx.timings));
  });
  return app;
}
