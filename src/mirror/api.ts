import type { IncomingMessage } from 'node:http';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { AppEnv } from '../serve/index.js';
import { StartExportRequestSchema } from '../upstream/schemas/export-job.js';
import { jobView, labelOfJob } from './jobs.js';
import { PACKAGE_NAME } from './objects.js';
import { packageOf } from './packages.js';
import { pageCountOf } from './pages.js';
import { signLink } from './sign.js';
import { checkBearer } from './tokens.js';
import { readVersion, versionForDomain, type MirrorVersion } from './versions.js';
import { describeZodError } from '../upstream/describe.js';
import { requestJson } from '../util/json-body.js';

/**
 * The service's static-export API, answered from the store (the mirror): every client of the
 * service — its own chart, airlock serve --values, airlock fetch — can use the mirror unchanged.
 * Errors are the service's JSON `{error}`.
 */
export interface ApiDeps {
  store: string;
  tokens: readonly Buffer[];
  secret: Buffer;
  ttlSeconds: number;
  /** Base URL of links (e.g. https://mirror.internal); default: http://<Host of the request>. */
  publicUrl?: string;
  /** The path the request reached the mirror under, after that base (a library's site by path). */
  linkPrefix: (req: IncomingMessage) => string;
  now: () => number;
  log?: (line: string) => void;
}

/** A Host header fit to build a link from: a name or IP literal and a port, nothing else. */
const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** Where the links of an answer start (`https://mirror.internal/docs.example.com`), or null when the Host header cannot build one. */
export function linkOrigin(d: Pick<ApiDeps, 'publicUrl' | 'linkPrefix'>, c: Context<AppEnv>): string | null {
  const host = c.req.header('host') ?? '';
  if (d.publicUrl === undefined && !HOST.test(host)) return null;
  return (d.publicUrl ?? `http://${host}`).replace(/\/+$/, '') + d.linkPrefix(c.env.incoming);
}

function auth(tokens: readonly Buffer[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const r = checkBearer(c.req.header('authorization'), tokens);
    if (r === 'missing') return c.json({ error: 'missing Authorization: Bearer <key>' }, 401);
    if (r === 'wrong') return c.json({ error: 'invalid API key' }, 403);
    await next();
  };
}

async function jobVersion(d: ApiDeps, c: Context<AppEnv>): Promise<MirrorVersion | Response> {
  const jobId = c.req.param('jobId') ?? '';
  const label = labelOfJob(jobId);
  if (label === null) return c.json({ error: `job not found: ${JSON.stringify(jobId.slice(0, 80))}` }, 404);
  const v = await readVersion(d.store, label);
  return v ?? c.json({ error: `job not found: ${jobId} (version ${label} is not in this mirror's store)` }, 404);
}

export function mirrorApi(d: ApiDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const base = '/v1/static-export/jobs';
  app.use(`${base}`, auth(d.tokens));
  app.use(`${base}/*`, auth(d.tokens));

  app.post(base, async (c) => {
    // `paths` is validated like the service does, and ignored: a stored version is exported whole.
    const got = await requestJson(c.req.raw);
    if (!got.ok) return c.json({ error: got.error }, got.status);
    const body = StartExportRequestSchema.safeParse(got.value);
    if (!body.success) return c.json({ error: `invalid request: ${describeZodError(body.error)}` }, 400);
    const { domain } = body.data;
    const version = body.data.version ?? undefined;
    const v = await versionForDomain(d.store, domain, version);
    if (!v) return c.json({ error: `domain not found: ${domain}${version ? ` (version ${version})` : ''} has no version in this mirror's store` }, 404);
    // A version imported from a delta gets its package built now, while the client polls (its
    // bundle request waits for the rest); a failure is answered there.
    packageOf(d.store, v).catch(() => {});
    return c.json(jobView(v, await pageCountOf(v)), 202);
  });

  app.get(`${base}/:jobId`, async (c) => {
    const v = await jobVersion(d, c);
    return v instanceof Response ? v : c.json(jobView(v, await pageCountOf(v)));
  });

  app.post(`${base}/:jobId/bundle`, async (c) => {
    const v = await jobVersion(d, c);
    if (v instanceof Response) return v;
    const origin = linkOrigin(d, c);
    if (origin === null) return c.json({ error: 'a valid Host header is needed to build the link' }, 400);
    let pkg;
    try {
      pkg = await packageOf(d.store, v);
    } catch (err) {
      d.log?.(`airlock mirror: ${err instanceof Error ? err.message : String(err)}`);
      return c.json({ error: `the package of version ${v.label} cannot be prepared now (the mirror's log says why); try again later` }, 503);
    }
    const expires = Math.floor(d.now() / 1000) + d.ttlSeconds;
    const link = (name: string, form: 'archive' | 'airlock') =>
      `${origin}/_airlock/objects/${v.label}/${name}?${signLink(d.secret, { label: v.label, name, form, expires })}`;
    return c.json({
      jobId: c.req.param('jobId'),
      bundleUrl: link(v.archive.name, 'archive'),
      sizeBytes: v.archive.size,
      expiresAt: new Date(expires * 1000).toISOString(),
      // Extra fields (the upstream schema passes unknown fields through): a downstream airlock
      // fetch prefers the original signed package, so signatures verify across any number of hops,
      // and knows its version (hence the output file's name) before downloading it.
      packageUrl: link(PACKAGE_NAME, 'airlock'),
      packageSha256: pkg.sha256,
      version: v.label,
    });
  });
  return app;
}
