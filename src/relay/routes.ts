import { Hono, type Context } from 'hono';
import type { Dispatcher } from 'undici';
import { featureForPath, isOn, type Feature, type ResolvedFeatures } from '../features/index.js';
import { indexOf, type AppEnv } from '../serve/index.js';
import { redact } from '../util/redact.js';
import { DEFAULT_MAX_BODY_BYTES, readJsonBody } from '../util/json-body.js';
import { DEFAULT_LIMITS, RelayLimiter, type RelayLimits } from './limits.js';
import { DEFAULT_MAX_ANSWER_BYTES, passThrough, readAnswer } from './stream.js';
import { refused } from './refused.js';
import { callUpstream, classifyError, DEFAULT_TIMEOUTS, relayAgent, type UpstreamTimeouts } from './upstream.js';
import { validateAssistant, validateSearchBody, validateSearchQuery } from './validate.js';

export interface RelayOptions {
  resolved: ResolvedFeatures;
  /** The service's `{base_url}` (checked by relayConfig). */
  upstreamUrl: string;
  /** The assistant key (`svc_dsc_…`, checked by relayConfig); sent upstream only, never logged. */
  key: string;
  limits?: Partial<RelayLimits>;
  maxBodyBytes?: number;
  timeouts?: Partial<UpstreamTimeouts>;
  /** The largest answer relayed (default DEFAULT_MAX_ANSWER_BYTES): a search answer above it is a 502, an assistant stream is cut with an error part. */
  maxAnswerBytes?: number;
  now?: () => number;
  dispatcher?: Dispatcher;
  log?: (line: string) => void;
}

export interface Relay {
  /** Mount under the server's app (src/serve `app`); requests reach it when `claims` says so. */
  app: Hono<AppEnv>;
  claims(method: string, path: string): boolean;
  close(): Promise<void>;
}

type Call = { path: string; method: 'GET' | 'POST'; body?: string; sse: boolean };

/**
 * Relays for the discovery features that are on: the browser talks to this
 * origin only (CSP connect-src 'self'); the relay checks the body with the service's schema,
 * applies the service's rate limits, and forwards with its own key. Nothing reaches the
 * upstream before every check passed.
 */
export function createRelay(o: RelayOptions): Relay {
  const relayed = (['assistant', 'search'] as Feature[]).filter((f) => isOn(o.resolved, f));
  const base = o.upstreamUrl.replace(/\/+$/, '');
  const max = o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxAnswer = o.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const limiter = new RelayLimiter({ ...DEFAULT_LIMITS, ...o.limits }, o.now);
  const ownAgent = o.dispatcher === undefined;
  const timeouts = { ...DEFAULT_TIMEOUTS, ...o.timeouts };
  const dispatcher = o.dispatcher ?? relayAgent(timeouts);
  const log = o.log ?? (() => {});
  const app = new Hono<AppEnv>();

  // The key holder may only ask about the site it serves: the key is organisation-wide, and an
  // open relay would let any reader query the organisation's other domains (confused deputy).
  const wrongDomain = (c: Context<AppEnv>, domain: string) => {
    const served = indexOf(c).domain;
    return domain === served ? null : c.json({ error: `unknown domain ${JSON.stringify(domain)}: this server relays for ${served} only` }, 404);
  };

  const forward = async (c: Context<AppEnv>, call: Call): Promise<Response> => {
    const over = limiter.admit(c.env.incoming);
    if (over) {
      c.header('Retry-After', String(over.retryAfterSec));
      return c.json({ error: over.error }, 429);
    }
    const abort = new AbortController();
    const client = c.req.raw.signal;
    if (client.aborted) abort.abort(client.reason);
    else client.addEventListener('abort', () => abort.abort(client.reason), { once: true });
    // A search answer has an overall deadline; the assistant's stream has the idle bound only.
    let late = false;
    const deadline = call.sse
      ? undefined
      : setTimeout(() => {
          late = true;
          abort.abort();
        }, timeouts.answerMs);
    try {
      return await relayCall(c, call, abort, () => late);
    } finally {
      clearTimeout(deadline);
    }
  };

  const relayCall = async (c: Context<AppEnv>, call: Call, abort: AbortController, late: () => boolean): Promise<Response> => {
    const tooLate = () => c.json({ error: `the search service did not finish its answer within ${timeouts.answerMs / 1000} s` }, 504);
    let res: Dispatcher.ResponseData;
    try {
      res = await callUpstream({
        url: base + call.path,
        method: call.method,
        key: o.key,
        body: call.body,
        accept: call.sse ? 'text/event-stream' : 'application/json',
        signal: abort.signal,
        dispatcher,
      });
    } catch (err) {
      if (late()) return tooLate();
      if (abort.signal.aborted) return new Response(null, { status: 499 }); // the reader left; nobody to answer
      const f = classifyError(err, base, timeouts);
      log(redact(`airlock relay: ${call.method} ${call.path}: ${f.error}: ${f.detail}`));
      return c.json({ error: f.error }, f.status);
    }
    if (res.statusCode < 200 || res.statusCode > 299)
      return refused(c, res, `${call.method} ${call.path}`, log, call.sse ? 'the assistant service' : 'the search service');
    const unfit = unfitAnswer(res.headers, call.sse);
    if (unfit) {
      res.body.on('error', () => {}); // destroying it aborts the request; nobody waits on that error
      res.body.destroy();
      log(redact(`airlock relay: ${call.method} ${call.path}: ${unfit}`));
      return c.json({ error: unfit }, 502);
    }
    const headers = new Headers({
      // Our type, not the upstream's: a text/html answer relayed as-is would run as a page of THIS
      // origin (stored XSS through a compromised or spoofed upstream).
      'content-type': call.sse ? 'text/event-stream; charset=utf-8' : 'application/json; charset=utf-8',
      'x-content-type-options': 'nosniff',
      // No proxy or browser cache may hold the answer, nor buffer it (nginx honours x-accel-buffering).
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    if (call.sse) {
      headers.set('x-vercel-ai-ui-message-stream', 'v1');
      return new Response(passThrough(res.body, abort, maxAnswer), { status: res.statusCode, headers });
    }
    // A search answer is small JSON: gathered whole (bounded), so a failure is still a clean 502.
    const answer = await readAnswer(res.body, maxAnswer);
    if (!answer.ok) {
      if (late()) return tooLate();
      if (abort.signal.aborted) return new Response(null, { status: 499 });
      log(redact(`airlock relay: ${call.method} ${call.path}: ${answer.error}`));
      return c.json({ error: answer.error }, 502);
    }
    // A valid JSON answer only; a key the service echoes is redacted as everywhere else.
    const text = Buffer.from(answer.bytes).toString('utf8');
    try {
      JSON.parse(text);
    } catch {
      log(`airlock relay: ${call.method} ${call.path}: the answer is not JSON`);
      return c.json({ error: 'the search service sent an answer that is not JSON' }, 502);
    }
    return new Response(text.includes('svc_') ? redact(text) : answer.bytes, { status: res.statusCode, headers });
  };

  if (relayed.includes('assistant')) {
    app.post('/discovery/v2/assistant/:domain/message', async (c) => {
      void c.req.raw.signal; // created now, so a disconnect during the checks is seen later
      const body = await readJsonBody(c.req.raw, max);
      if (!body.ok) return c.json({ error: body.error }, body.status);
      const v = validateAssistant(body.value);
      if (!v.ok) return c.json({ error: v.error, problems: v.problems }, 400);
      const domain = c.req.param('domain');
      const bad = wrongDomain(c, domain);
      if (bad) return bad;
      // Re-serialised from the parsed value: the service sees exactly what was validated (no
      // duplicate-key or parser-differential smuggling past the schema).
      return forward(c, { method: 'POST', path: `/discovery/v2/assistant/${encodeURIComponent(domain)}/message`, body: JSON.stringify(v.value), sse: true });
    });
  }
  if (relayed.includes('search')) {
    const path = (domain: string) => `/discovery/v2/search/${encodeURIComponent(domain)}`;
    app.post('/discovery/v2/search/:domain', async (c) => {
      const body = await readJsonBody(c.req.raw, max);
      if (!body.ok) return c.json({ error: body.error }, body.status);
      const v = validateSearchBody(body.value);
      if (!v.ok) return c.json({ error: v.error, problems: v.problems }, 400);
      const domain = c.req.param('domain');
      return wrongDomain(c, domain) ?? forward(c, { method: 'POST', path: path(domain), body: JSON.stringify(v.value), sse: false });
    });
    app.get('/discovery/v2/search/:domain', (c) => {
      const v = validateSearchQuery(c.req.query());
      if (!v.ok) return c.json({ error: v.error, problems: v.problems }, 400);
      const domain = c.req.param('domain');
      const qs = new URLSearchParams(Object.entries(v.value).filter((e): e is [string, string] => typeof e[1] === 'string'));
      return wrongDomain(c, domain) ?? forward(c, { method: 'GET', path: `${path(domain)}?${qs}`, sse: false });
    });
  }

  return {
    app,
    claims: (method, path) => {
      const f = featureForPath(method, path);
      return f !== null && relayed.includes(f);
    },
    close: async () => {
      if (ownAgent) await dispatcher.close();
    },
  };
}

/**
 * Why an upstream 2xx cannot be relayed, or null: an answer of another type (an HTML page under a
 * JSON or event-stream label), or compressed although identity was asked for (its bytes would
 * reach the reader as garbage, and a bomb would be ours to expand).
 */
function unfitAnswer(headers: Dispatcher.ResponseData['headers'], sse: boolean): string | null {
  const service = sse ? 'the assistant service' : 'the search service';
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : (v ?? ''));
  const encoding = one(headers['content-encoding']).trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity')
    return `${service} sent a compressed answer (${JSON.stringify(encoding.slice(0, 40))}), which the relay does not pass on`;
  const type = one(headers['content-type']).split(';')[0]!.trim().toLowerCase();
  const fits = sse ? type === 'text/event-stream' : type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
  return fits ? null : `${service} answered with type ${JSON.stringify(type.slice(0, 60) || '(none)')}, not ${sse ? 'an event stream' : 'JSON'}`;
}
