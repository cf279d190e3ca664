import { z } from 'zod';

/**
 * Fault switches for tests (bad input), settable through options or
 * `POST /_emulator/faults` (a JSON merge: fields given replace, `null` clears).
 */
export const FaultsSchema = z.strictObject({
  /** Cut the object connection after this many body bytes of a response; `times` responses, or every one. */
  dropAfterBytes: z.strictObject({ bytes: z.number().int().min(0), times: z.union([z.number().int().min(1), z.literal('always')]).default(1) }).nullable(),
  /** Pace object bodies to this many bytes per second. */
  throttleBytesPerSec: z.number().int().min(1).nullable(),
  /** Lifetime of each new presigned link (0: expired at once). */
  linkLifetimeSeconds: z.number().int().min(0).max(604_800),
  /** Jobs for these domains fail halfway, with an `error` text. */
  failingDomains: z.array(z.string()),
  /** The next `count` API calls answer 429 with this Retry-After (seconds). */
  burst429: z.strictObject({ count: z.number().int().min(0), retryAfterSeconds: z.number().int().min(0).default(1) }).nullable(),
  /** The next `count` API calls answer 500. */
  burst500: z.strictObject({ count: z.number().int().min(0) }).nullable(),
  /** Serve this file as the export archive of `domain` (evil-archive tests); format from the extension. */
  serveArchive: z.array(z.strictObject({ domain: z.string().min(1), path: z.string().min(1) })),
  /** Object storage holds only the first N bytes of each archive (the API still reports the full size). */
  truncateObjectAt: z.number().int().min(0).nullable(),
  /** The bundle answer reports this sizeBytes instead of the real one. */
  wrongSizeBytes: z.number().int().min(0).nullable(),
  /** Object storage answers an ETag that is not the MD5 of the bytes. */
  wrongEtag: z.boolean(),
  /** Object storage answers as GCS does for expired links (400 ExpiredToken) instead of S3 (403 AccessDenied). */
  storage: z.enum(['s3', 'gcs']),
  /** The organisation has no static export: every export call answers 403 `{error}`. */
  staticExportDisabled: z.boolean(),
});
export type Faults = z.infer<typeof FaultsSchema>;
export type FaultsInput = z.input<typeof FaultsSchema>;

export const DEFAULT_FAULTS: Faults = {
  dropAfterBytes: null,
  throttleBytesPerSec: null,
  linkLifetimeSeconds: 900,
  failingDomains: [],
  burst429: null,
  burst500: null,
  serveArchive: [],
  truncateObjectAt: null,
  wrongSizeBytes: null,
  wrongEtag: false,
  storage: 's3',
  staticExportDisabled: false,
};

/** A patch: any subset of the switches; `null` resets a switch to its default. */
export type FaultsPatch = { [K in keyof Faults]?: Faults[K] | null };
export const FaultsPatchSchema = z.strictObject(
  Object.fromEntries(Object.entries(FaultsSchema.shape).map(([k, v]) => [k, (v as z.ZodType).nullable().optional()])),
) as unknown as z.ZodType<FaultsPatch>;

/** Apply a validated patch; `null` values clear a switch. Pure. */
export function mergeFaults(current: Faults, patch: FaultsPatch): Faults {
  const next = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    (next as Record<string, unknown>)[k] = v === null ? DEFAULT_FAULTS[k as keyof Faults] : v;
  }
  return next;
}

/** Take one injected API failure, if a burst is pending. Mutates the counters. */
export function takeBurst(f: Faults): { status: 429; retryAfter: number } | { status: 500 } | null {
  if (f.burst429 && f.burst429.count > 0) {
    f.burst429 = { ...f.burst429, count: f.burst429.count - 1 };
    return { status: 429, retryAfter: f.burst429.retryAfterSeconds };
  }
  if (f.burst500 && f.burst500.count > 0) {
    f.burst500 = { count: f.burst500.count - 1 };
    return { status: 500 };
  }
  return null;
}

/** Whether this object response is to be cut, consuming one `times`. */
export function takeDrop(f: Faults): number | null {
  const d = f.dropAfterBytes;
  if (!d) return null;
  if (d.times !== 'always') f.dropAfterBytes = d.times > 1 ? { ...d, times: d.times - 1 } : null;
  return d.bytes;
}
