import { z } from 'zod';

/**
 * `POST /v1/static-export/jobs/{jobId}/bundle`: a presigned object-storage link. `jobId` and
 * `sizeBytes` are sent by the live service but not documented, so they stay optional.
 */
export const BundleLinkSchema = z.looseObject({
  bundleUrl: z.url({ protocol: /^https?$/ }),
  expiresAt: z.string().min(1),
  jobId: z.string().optional(),
  sizeBytes: z.number().int().min(0).optional(),
});
export type BundleLink = z.infer<typeof BundleLinkSchema>;
