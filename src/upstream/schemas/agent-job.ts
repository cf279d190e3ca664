import { z } from 'zod';
import { IdSchema, TimeSchema, optional } from './tolerant.js';

export const AgentJobStatusSchema = z.enum(['active', 'completed', 'archived', 'failed']);
export type AgentJobStatus = z.infer<typeof AgentJobStatusSchema>;

/**
 * `GET /v2/agent/{projectId}/job/{id}` → `{id, status, source {repository, ref}, model,
 * prLink|null, createdAt, archivedAt|null}`. Only `status` is needed (the client knows the id it
 * asked for); everything else is read when it has the documented shape. Unknown fields pass.
 */
export const AgentJobAnswerSchema = z.looseObject({
  id: optional(IdSchema),
  status: AgentJobStatusSchema,
  source: optional(z.looseObject({ repository: optional(z.string().max(2048)), ref: optional(z.string().max(1024)) })),
  model: optional(z.string().max(256)),
  prLink: optional(z.string().min(1).max(4096)),
  createdAt: optional(TimeSchema),
  archivedAt: optional(TimeSchema),
});
export type AgentJob = z.infer<typeof AgentJobAnswerSchema> & { id: string };
export const AgentJobSchema = AgentJobAnswerSchema;

/** States after which polling stops. */
export const AGENT_JOB_FINAL: ReadonlySet<AgentJobStatus> = new Set(['completed', 'archived', 'failed']);
