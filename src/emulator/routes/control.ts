import { Hono } from 'hono';
import { z } from 'zod';
import { describeZodError } from '../../upstream/describe.js';
import { requestJson } from '../../util/json-body.js';
import type { EmulatorContext } from '../context.js';
import { FaultsPatchSchema } from '../faults.js';
import { jobView } from '../lifecycle.js';

export const AgentJobSeedSchema = z.strictObject({
  projectId: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/),
  /** A chosen id (default: random `agj_…`), so a test or a reader of the README can name it in advance. */
  id: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/)
    .optional(),
  outcome: z.enum(['completed', 'failed', 'archived']).default('completed'),
});

/**
 * `/_emulator/*`: test controls. No key needed — the emulator is a local tool bound to 127.0.0.1
 * by default; nothing here can reveal a key (recorded headers are redacted).
 */
export function controlRoutes(ctx: EmulatorContext): Hono {
  const app = new Hono();
  app.post('/faults', async (c) => {
    const got = await requestJson(c.req.raw);
    if (!got.ok) return c.json({ error: got.error }, got.status);
    const patch = FaultsPatchSchema.safeParse(got.value);
    if (!patch.success) return c.json({ error: `invalid faults: ${describeZodError(patch.error)}` }, 400);
    return c.json({ faults: ctx.state.setFaults(patch.data) });
  });
  app.post('/agent-jobs', async (c) => {
    const got = await requestJson(c.req.raw);
    if (!got.ok) return c.json({ error: got.error }, got.status);
    const body = AgentJobSeedSchema.safeParse(got.value);
    if (!body.success) return c.json({ error: `invalid request: ${describeZodError(body.error)}` }, 400);
    const job = ctx.state.addAgentJob(body.data.projectId, body.data.outcome, ctx.now(), body.data.id);
    return c.json({ projectId: job.projectId, id: job.id }, 201);
  });
  app.get('/state', (c) => {
    const now = ctx.now();
    const s = ctx.state;
    return c.json({
      faults: s.faults,
      domains: Object.keys(ctx.sites),
      jobs: [...s.jobs.values()].map((j) => ({ domain: j.domain, ...jobView(j, now, ctx.timings) })),
      apiRequests: s.apiRequests,
      objectRequests: s.objectRequests,
    });
  });
  return app;
}
