import { z } from 'zod';

export const AgentJobStatusSchema = z.enum(['active', 'completed', 'archived', 'failed']);
export type AgentJobStatus = z.infer<typeof AgentJobStatusSchema>;

/** `GET /v2/agent/{projectId}/job/{id}` (issue 4 table). Loose: unknown fields pass through. */
export const AgentJobSchema = z.looseObject({
  id: z.string().min(1),
  status: AgentJobStatusSchema,
  source: z.looseObject({ repository: z.string(), ref: z.string() }).optional(),
  model: z.string().optional(),
  prLink: z.string().nullable().optional(),
  createdAt: z.string().optional(),
  archivedAt: z.string().nullable().optional(),
});
export type AgentJob = z.infer<typeof AgentJobSchema>;

/** States after which polling stops. */
export const AGENT_JOB_FINAL: ReadonlySet<AgentJobStatus> = new Set(['completed', 'archived', 'failed']);
