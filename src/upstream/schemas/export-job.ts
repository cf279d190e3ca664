import { z } from 'zod';

/** Statuses seen on the live service (issue 4). Anything else is a schema failure, not a guess. */
export const JobStatusSchema = z.enum(['queued', 'running', 'completed', 'failed']);
export type JobStatus = z.infer<typeof JobStatusSchema>;

/**
 * A static export job. `POST /v1/static-export/jobs` may answer only `{jobId}` (documented) or the
 * whole job (the live service, 202); `status` is therefore optional on the create answer only.
 * Loose: fields the service adds later pass through untouched.
 */
export const ExportJobSchema = z.looseObject({
  jobId: z.string().min(1),
  status: JobStatusSchema,
  progress: z.number().min(0).max(100).optional(),
  pageCount: z.number().int().min(0).nullable().optional(),
  error: z.string().optional(),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
});
export type ExportJob = z.infer<typeof ExportJobSchema>;

export const CreatedExportJobSchema = ExportJobSchema.extend({ status: JobStatusSchema.optional() });

export const StartExportRequestSchema = z.object({ domain: z.string().min(1).max(253) });
