/** src/mirror — the service's static-export API and signed object links, served from a store. */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Hono } from 'hono';
import { UsageError } from '../errors.js';
import { readRegularFile } from '../util/fsx.js';
import type { AppEnv } from '../serve/index.js';
import { mirrorApi } from './api.js';
import { handleObject } from './objects.js';
import { loadTokens } from './tokens.js';
import { fleetApi } from './fleet.js';

export { hashToken, parseTokens, checkBearer } from './tokens.js';
export { signLink, checkLink, type LinkClaims } from './sign.js';
export { jobIdFor, labelOfJob } from './jobs.js';
export { FleetAnswerSchema, FleetReportSchema, FLEET_POLL_PATH, Rollout, type FleetAnswer, type FleetReport } from './fleet.js';

export interface MirrorOptions {
  store: string;
  /** The admin tokens and the link secret: read from tokensFile and secretFile, or given already read (loadMirrorKeys). */
  keys?: MirrorKeys;
  tokensFile: string;
  /** A file of at least 32 bytes shared by every worker/replica; default: random per process. */
  secretFile?: string;
  ttlSeconds?: number;
  publicUrl?: string;
  log: (line: string) => void;
  now?: () => number;
  /** Called once a package object request is answered (metrics). */
  onDownload?: (status: number) => void;
  /** Fleet rollouts (src/mirror/fleet.ts): time from "all prepared" to the switch, ms. */
  fleetLeadMs?: number;
  fleetPrepareTimeoutMs?: number;
  /** Processes serving this mirror (fleet coordination needs one). */
  workers?: number;
  /** The path a request reached this mirror under (a library's site by path, `/<domain>`), put into the links it hands out; default none. */
  linkPrefix?: (req: IncomingMessage) => string;
}

export interface MirrorKeys {
  tokens: readonly Buffer[];
  secret: Buffer;
}

/** The admin tokens and the link secret, read once (bad files fail the start, exit 2). */
export async function loadMirrorKeys(o: { tokensFile: string; secretFile?: string }): Promise<MirrorKeys> {
  return { tokens: await loadTokens(o.tokensFile), secret: await loadSecret(o.secretFile) };
}

export interface Mirror {
  app: Hono<AppEnv>;
  appPrefixes: string[];
}

/** A secret is 32 bytes or a few more; a bigger file is a mistake (a wrong path). */
const SECRET_FILE_MAX_BYTES = 4096;

/** The shared link secret: a regular file only (opened non-blocking: a FIFO never hangs the start), bounded before reading. */
async function loadSecret(file: string | undefined): Promise<Buffer> {
  if (file === undefined) return randomBytes(32);
  const refuse = (why: string) => new UsageError(`mirror secret file ${file} ${why}`, { subject: file }, 'AIRLOCK_MIRROR_SECRET');
  const b = await readRegularFile(file, { maxBytes: SECRET_FILE_MAX_BYTES, refuse });
  if (b.length < 32) throw refuse(`holds ${b.length} bytes; it needs at least 32 (e.g. head -c 32 /dev/urandom > ${file})`);
  return b;
}

export async function createMirror(o: MirrorOptions): Promise<Mirror> {
  const { tokens, secret } = o.keys ?? (await loadMirrorKeys(o));
  const linkPrefix = o.linkPrefix ?? (() => '');
  const now = o.now ?? Date.now;
  const app = new Hono<AppEnv>();
  app.route('/', mirrorApi({ store: o.store, tokens, secret, ttlSeconds: o.ttlSeconds ?? 900, publicUrl: o.publicUrl, linkPrefix, now, log: o.log }));
  app.route(
    '/',
    fleetApi({
      store: o.store,
      tokens,
      secret,
      ttlSeconds: o.ttlSeconds ?? 900,
      publicUrl: o.publicUrl,
      linkPrefix,
      now,
      log: o.log,
      leadMs: o.fleetLeadMs,
      prepareTimeoutMs: o.fleetPrepareTimeoutMs,
      workers: o.workers,
    }),
  );
  app.on(['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'], '/_airlock/objects/*', async (c) => {
    // Large bodies go straight to the node response (backpressure, no web-stream copy).
    const res = (c.env as unknown as { outgoing: ServerResponse }).outgoing;
    await handleObject({ store: o.store, secret, now, onError: (err) => o.log(`airlock mirror: ${String(err)}`) }, c.env.incoming, res);
    // A client gone before any answer (an aborted download) got nothing: not a download answered.
    if (res.headersSent) o.onDownload?.(res.statusCode);
    // A fresh marker per request: the shared RESPONSE_ALREADY_SENT constant loses its marker when a
    // middleware adds a header after the handler (hono rebuilds it as the adapter's cached
    // response, which @hono/node-server then tries to write again: ERR_HTTP_HEADERS_SENT).
    return new Response(null, { headers: { 'x-hono-already-sent': 'true' } });
  });
  return { app, appPrefixes: ['/v1/static-export/'] };
}
