import { z } from 'zod';
import { IdSchema, TimeSchema, optional } from './tolerant.js';

/**
 * `POST /v1/static-export/jobs/{jobId}/bundle` → `{jobId, bundleUrl, sizeBytes, expiresAt}`: a
 * presigned object-storage link. Only `bundleUrl` is needed; `sizeBytes` (any number, checked
 * against the download when present: one above 2^53, a fraction or a negative is never the size
 * received, so it is refused, not ignored) and `expiresAt` (a fresh link is asked for once it passed) are used
 * when they make sense and ignored otherwise. Unknown fields pass through (an airlock mirror adds
 * `packageUrl`, `packageSha256` and `version`).
 */
export const BundleLinkSchema = z.looseObject({
  bundleUrl: z.url({ protocol: /^https?$/ }).max(16_384),
  expiresAt: optional(TimeSchema),
  jobId: optional(IdSchema),
  sizeBytes: optional(z.custom<number>((v) => typeof v === 'number' && !Number.isNaN(v))),
});
export type BundleLink = z.infer<typeof BundleLinkSchema>;
