import { z } from 'zod';
import { IdSchema, TimeSchema, optional } from './tolerant.js';

/**
 * `POST /v1/static-export/jobs/{jobId}/bundle` → `{jobId, bundleUrl, sizeBytes, expiresAt}`: a
 * presigned object-storage link. Only `bundleUrl` is needed; `sizeBytes`, when present and not
 * null, must be a number (checked against the download: one above 2^53, a fraction or a negative
 * is never the size received, so it is refused, not ignored; a size that is not a number at all
 * breaks the answer); `expiresAt` (a fresh link is asked for once it passed) is used when it makes
 * sense and ignored otherwise. Unknown fields pass through (an airlock mirror adds
 * `packageUrl`, `packageSha256` and `version`).
 */
export const BundleLinkSchema = z.looseObject({
  bundleUrl: z.url({ protocol: /^https?$/ }).max(16_384),
  expiresAt: optional(TimeSchema),
  jobId: optional(IdSchema),
  sizeBytes: z
    .custom<number>((v) => typeof v === 'number' && !Number.isNaN(v), 'expected the archive size in bytes (a number)')
    .nullish()
    .transform((v) => v ?? undefined),
});
export type BundleLink = z.infer<typeof BundleLinkSchema>;
