import { Hono } from 'hono';
import { UsageError } from '../errors.js';
import type { AirlockServerOptions, AppEnv } from '../serve/index.js';
import { readyRoutes } from './ready.js';
import type { ServeSettings } from '../values/settings.js';

/**
 * The extra routes `airlock serve` mounts on the server's hono app: /_airlock/ready (with the
 * fallback warning, if any), the mirror when enabled, then the feature switches' own app.
 */
export async function extraRoutes(o: {
  settings: ServeSettings;
  store: string;
  warning: () => string[] | null;
  workers: number;
  features: Pick<AirlockServerOptions, 'app' | 'appRoute'>;
  log: (line: string) => void;
  onMirrorDownload?: (status: number) => void;
  /** A follower's status for /_airlock/ready (serve --follow). */
  follow?: (() => object | null) | null;
  /** The bundle downloading behind the served version (staticExport.bundleUrl), for /_airlock/ready. */
  bundle?: (() => object | null) | null;
}): Promise<Pick<AirlockServerOptions, 'app' | 'appPrefixes' | 'appRoute'>> {
  const m = o.settings.mirror;
  if (m && o.workers > 1 && m.secretFile === undefined) {
    // Each worker would sign with its own random secret and refuse the others' links.
    throw new UsageError('--mirror with --workers > 1 needs mirror.secretFile in the values file (a secret shared by every worker)', {
      subject: 'mirror.secretFile',
    });
  }
  const app = new Hono<AppEnv>();
  app.route('/', readyRoutes(o.warning, o.follow ?? null, o.bundle ?? null));
  // The mirror (and the export client it answers for) loads only with --mirror (start-up).
  const mirror = m
    ? await (
        await import('../mirror/index.js')
      ).createMirror({
        store: o.store,
        tokensFile: m.tokensFile,
        secretFile: m.secretFile,
        ttlSeconds: m.ttlSeconds,
        publicUrl: m.publicUrl,
        log: o.log,
        onDownload: o.onMirrorDownload,
        fleetLeadMs: m.fleetLeadMs,
        workers: o.workers,
      })
    : null;
  if (mirror) app.route('/', mirror.app);
  if (o.features.app) app.route('/', o.features.app);
  return { app, appPrefixes: mirror?.appPrefixes ?? [], appRoute: o.features.appRoute };
}
