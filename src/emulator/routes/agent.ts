import { Hono } from 'hono';
import { apiGuard, type Env } from '../auth.js';
import type { EmulatorContext } from '../context.js';
import type { AgentJobRecord } from '../state.js';

/** The agent job as the service shows it: `active` for agentJobMs, then its outcome. Pure. */
export function agentJobView(j: AgentJobRecord, now: number, activeMs: number) {
  const done = now - j.createdAt >= activeMs;
  const status = done ? j.outcome : 'active';
  const doneAt = new Date(j.createdAt + activeMs).toISOString();
  return {
    id: j.id,
    status,
    source: { repository: `example/${j.projectId}-docs`, ref: 'main' },
    model: 'emulator-1',
    prLink: status === 'completed' ? `https://github.com/example/${j.projectId}-docs/pull/1` : null,
    createdAt: new Date(j.createdAt).toISOString(),
    archivedAt: status === 'archived' ? doneAt : null,
  };
}

/** `GET /v2/agent/:projectId/job/:id` (admin key). */
export function agentRoutes(ctx: EmulatorContext): Hono<Env> {
  const app = new Hono<Env>();
  app.get('/:projectId/job/:id', apiGuard(ctx, 'admin'), (c) => {
    const job = ctx.state.agentJobs.get(`${c.req.param('projectId')}/${c.req.param('id')}`);
    if (!job) return c.json({ error: `agent job not found: ${c.req.param('id')}` }, 404);
    return c.json(agentJobView(job, ctx.now(), ctx.agentJobMs));
  });
  return app;
}
