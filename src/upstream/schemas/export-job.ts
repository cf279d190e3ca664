import { z } from 'zod';
import { IdSchema, TimeSchema, optional } from './tolerant.js';

/** The statuses the service documents. Anything else is a schema failure, not a guess: fetch acts on it. */
export const JobStatusSchema = z.enum(['queued', 'running', 'completed', 'failed']);
export type JobStatus = z.infer<typeof JobStatusSchema>;

/** `progress` as documented is 0..100; a number outside is clamped, for display only. */
const Progress = z.number().transform((n) => Math.min(100, Math.max(0, n)));

/**
 * `GET /v1/static-export/jobs/{jobId}` → `{jobId, status, progress, pageCount, createdAt, updatedAt,
 * error}` (`error` a string when failed, `null` otherwise). Only `status` is needed: the client
 * knows the id it asked for. Unknown fields pass through.
 */
export const ExportJobAnswerSchema = z.looseObject({
  jobId: optional(IdSchema),
  status: JobStatusSchema,
  progress: optional(Progress),
  pageCount: optional(z.number().int().min(0)),
  error: optional(z.string()),
  createdAt: optional(TimeSchema),
  updatedAt: optional(TimeSchema),
});

/**
 * `POST /v1/static-export/jobs` → 202 with the whole job record; only `jobId` is needed (a missing
 * or null status then reads as queued). A status that is there is checked as the poll checks it.
 */
export const CreatedExportJobSchema = ExportJobAnswerSchema.extend({ jobId: IdSchema, status: JobStatusSchema.nullish().transform((v) => v ?? undefined) });

/** What the client returns: the answer with the job id always set. */
export type ExportJob = z.infer<typeof ExportJobAnswerSchema> & { jobId: string };
export const ExportJobSchema = ExportJobAnswerSchema;

/** The request body (what the emulator and the mirror read): `version` and `paths` are optional; null reads as absent. */
export const StartExportRequestSchema = z.looseObject({
  domain: z.string().min(1).max(253),
  version: z.string().min(1).max(256).nullish(),
  paths: z.array(z.string().min(1).max(1024)).max(10_000).nullish(),
});
export type StartExportRequest = z.infer<typeof StartExportRequestSchema>;
