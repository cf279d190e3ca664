import { z } from 'zod';
import { VERSION_LABEL } from '../package/label.js';
import { DEPLOYMENTS } from '../features/index.js';

/**
 * The values file of `airlock serve --values FILE` (Helm-style YAML). The chart's own keys
 * (`staticExport.enabled|bundleUrl|version`) keep the chart's meaning; the rest are airlock's.
 * Built twice: strict, to find unknown keys (reported as warnings: a newer chart's keys must not
 * stop an older airlock), and stripping, to read the known ones.
 */
const label = z
  .union([z.string(), z.number()])
  .transform(String)
  .refine((v) => VERSION_LABEL.test(v), { message: `must be a version label matching ${VERSION_LABEL.source}` });
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const path = z.string().min(1);

export function valuesSchema(strict: boolean) {
  const obj = strict ? z.strictObject : z.object;
  const features = obj({
    search: z.boolean().optional(),
    assistant: z.boolean().optional(),
    analytics: z.boolean().optional(),
    'api-playground': z.boolean().optional(),
    'static-export': z.boolean().optional(),
    'local-search': z.boolean().optional(),
    'local-assistant': z.boolean().optional(),
  });
  const deployment = obj({ type: z.enum(DEPLOYMENTS).optional() });
  const staticExport = obj({
    enabled: z.boolean().optional(),
    bundleUrl: httpUrl.optional(),
    version: label.optional(),
    /** Manifest domain of a raw archive (a bundle URL's host is a bucket, not the site). */
    domain: z
      .string()
      .regex(/^[A-Za-z0-9.-]{1,253}$/, 'must be a host name')
      .optional(),
    /** Public keys that may sign a `.airlock` package served at bundleUrl. */
    trust: z.array(path).optional(),
    /** Accept unsigned content: a raw export archive (unsigned by nature) or an unsigned package. */
    allowUnsigned: z.boolean().optional(),
    /** Bounds of the bundle download (defaults: 30 s, 1024 B/s over 30 s, 3600 s). */
    download: obj({
      headersTimeoutSeconds: z.number().min(0.05).max(3600).optional(),
      minBytesPerSecond: z
        .number()
        .int()
        .min(0)
        .max(1 << 30)
        .optional(),
      rateWindowSeconds: z.number().min(0.1).max(3600).optional(),
      timeoutSeconds: z
        .number()
        .min(0.1)
        .max(7 * 24 * 3600)
        .optional(),
      maxBytes: z.number().int().min(1024).max(Number.MAX_SAFE_INTEGER).optional(),
    }).optional(),
  });
  return obj({
    staticExport: staticExport.optional(),
    deployment: deployment.optional(),
    features: features.optional(),
    /** serve --library: each site's own settings (the top-level deployment and features are every other site's). */
    library: obj({
      sites: z
        .array(
          obj({
            domain: z.string().max(253),
            /** More host names that reach the site (as --site-host NAME=DOMAIN). */
            hosts: z.array(z.string().max(253)).max(100).optional(),
            /** Serve this version, whatever the site's active one (as serve --version). */
            version: label.optional(),
            deployment: deployment.optional(),
            features: features.optional(),
            /** The site's bundle, fetched at start-up into its store (as the top-level staticExport for one store). */
            staticExport: staticExport.optional(),
          }),
        )
        .max(10_000)
        .optional(),
    }).optional(),
    store: path.optional(),
    port: z.number().int().min(0).max(65535).optional(),
    host: z.string().min(1).optional(),
    mirror: obj({
      enabled: z.boolean().optional(),
      tokensFile: path.optional(),
      secretFile: path.optional(),
      linkTtlSeconds: z
        .number()
        .int()
        .min(10)
        .max(7 * 24 * 3600)
        .optional(),
      publicUrl: httpUrl.optional(),
      /** Fleet rollouts: seconds from "every replica prepared the version" to the switch. */
      fleetLeadSeconds: z.number().min(0.1).max(600).optional(),
    }).optional(),
    /** Follow a mirror (serve --follow): switch with the rest of the fleet when its active version changes. */
    follow: obj({
      url: httpUrl.optional(),
      /** File holding the mirror token (else AIRLOCK_MIRROR_TOKEN or AIRLOCK_MIRROR_TOKEN_FILE). */
      tokenFile: path.optional(),
      trust: z.array(path).optional(),
      allowUnsigned: z.boolean().optional(),
      pollSeconds: z.number().min(0.1).max(300).optional(),
    }).optional(),
    /** Skew protection: seconds a previous version's non-HTML files keep answering after a switch. */
    skewGraceSeconds: z
      .number()
      .min(0)
      .max(7 * 24 * 3600)
      .optional(),
    /** The site's sub-path (`/project/`; `/`: the root only), instead of detecting it. */
    basePath: z.string().max(200).optional(),
    /** local-assistant's in-network model (serve --assistant-model, --assistant-model-name); its key comes from the environment only. */
    localAssistant: obj({ model: obj({ url: httpUrl.optional(), name: z.string().min(1).max(200).optional() }).optional() }).optional(),
  });
}

export type Values = z.output<ReturnType<typeof valuesSchema>>;
