import { Hono } from 'hono';
import { apiGuard, exportEnabled, type Env } from '../auth.js';
import type { EmulatorContext } from '../context.js';
import type { StoredObject } from '../bundles.js';
import { jobView } from '../lifecycle.js';
import { presignQuery } from '../presign.js';

/**
 * `POST /v1/static-export/jobs/:jobId/bundle`: 409 `{error}` until the job completed, then 200
 * `{jobId, bundleUrl, sizeBytes, expiresAt}` with a fresh presigned link on every call (the job
 * stays reusable).
 */
export function bundleRoutes(ctx: EmulatorContext): Hono<Env> {
  const app = new Hono<Env>();
  const guard = apiGuard(ctx, 'admin');
  app.post('/:jobId/bundle', guard, exportEnabled(ctx), async (c) => {
    const jobId = c.req.param('jobId');
    const job = ctx.state.jobs.get(jobId);
    if (!job) return c.json({ error: `job not found: ${jobId}` }, 404);
    const view = jobView(job, ctx.now(), ctx.timings);
    if (view.status !== 'completed') return c.json({ error: `job ${jobId} is ${view.status}, the bundle is not ready` }, 409);
    const obj = await archiveFor(ctx, job.domain);
    const key = `exports/${jobId}/${obj.name}`;
    ctx.state.objects.set(key, obj);
    const { query, expiresAt } = presignQuery(ctx.secret, key, ctx.now(), ctx.state.faults.linkLifetimeSeconds);
    const origin = new URL(c.req.url).origin;
    const sizeBytes = ctx.state.faults.wrongSizeBytes ?? obj.size;
    return c.json({ jobId, bundleUrl: `${origin}/_objects/${key}?${query}`, sizeBytes, expiresAt });
  });
  return app;
}

function archiveFor(ctx: EmulatorContext, domain: string): Promise<StoredObject> {
  const served = ctx.state.faults.serveArchive.find((s) => s.domain === domain);
  if (served) return ctx.bundles.served(served.path);
  return ctx.bundles.get(domain, ctx.sites[domain]!);
}
