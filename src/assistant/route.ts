import { Hono, type Context } from 'hono';
import type { AppEnv } from '../serve/app.js';
import { indexOf } from '../serve/app.js';
import type { LoadedIndex } from '../serve/version-index.js';
import type { LocalSearch } from '../search/service.js';
import { DEFAULT_LIMITS, RelayLimiter, type RelayLimits } from '../relay/limits.js';
import { validateAssistant } from '../relay/validate.js';
import { DEFAULT_MAX_BODY_BYTES, readJsonBody } from '../util/json-body.js';
import { AnswerStopped, prepareAnswer, RetrievalNotReady } from './answer.js';
import { ModelError, streamChat, type ModelOptions } from './model.js';
import type { Section } from './prompt.js';
import { Threads, type ThreadLimits } from './threads.js';

/**
 * local-assistant: the service's assistant endpoint (`POST /discovery/v2/assistant/{domain}/message`)
 * answered by this server. The body is checked with the service's schema, exactly as the relay
 * checks it; the service's rate limits apply (per organisation per hour, per client IP per day);
 * the sections come from the served version's local search; the answer is the organisation's
 * model's, streamed as an AI SDK v5 UI message stream. Questions and answers are never logged.
 */
export interface LocalAssistantOptions {
  model: ModelOptions;
  limits?: Partial<RelayLimits>;
  threads?: Partial<ThreadLimits>;
  maxBodyBytes?: number;
  now?: () => number;
  log?: (line: string) => void;
}

export interface LocalAssistant {
  app: Hono<AppEnv>;
  claims(method: string, path: string): boolean;
  /** The server is shutting down: answers being streamed end now with an `error` part saying so; new questions get 503. */
  close(): void;
  /** The version now served (each switch): an answer's sources are the pages it has when they are sent. */
  onVersion(idx: LoadedIndex): void;
}

const SHUTTING_DOWN = 'the server is shutting down; ask again in a moment';

const PATH = /^\/discovery\/v2\/assistant\/[^/]+\/message$/;
/** Each quoted section is cut to this many characters (the prompt's bound shares them out too). */
const SECTION_CHARS = 4_000;

export function createLocalAssistant(o: LocalAssistantOptions, search: LocalSearch): LocalAssistant {
  const limiter = new RelayLimiter({ ...DEFAULT_LIMITS, ...o.limits }, o.now);
  const threads = new Threads(o.threads, o.now);
  const log = o.log ?? (() => {});
  const app = new Hono<AppEnv>();
  const live = new Set<AbortController>();
  let closing = false;
  let served: LoadedIndex | null = null;

  const unavailable = (c: Context<AppEnv>, error: string, retryAfterSec: number) => {
    c.header('Retry-After', String(retryAfterSec));
    return c.json({ error }, 503);
  };

  app.post('/discovery/v2/assistant/:domain/message', async (c) => {
    void c.req.raw.signal; // created now, so a disconnect during the checks is seen later
    if (closing) return unavailable(c, SHUTTING_DOWN, 5);
    const over = limiter.admit(c.env.incoming);
    if (over) {
      c.header('Retry-After', String(over.retryAfterSec));
      return c.json({ error: over.error }, 429);
    }
    const body = await readJsonBody(c.req.raw, o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    if (!body.ok) return c.json({ error: body.error }, body.status);
    const v = validateAssistant(body.value);
    if (!v.ok) return c.json({ error: v.error, problems: v.problems }, 400);
    const idx = indexOf(c);
    const domain = c.req.param('domain');
    if (domain !== idx.domain)
      return c.json({ error: `unknown domain ${JSON.stringify(domain.slice(0, 253))}: this server answers for ${idx.domain} only` }, 404);
    const abort = new AbortController();
    const unfollow = follow(c.req.raw.signal, abort);
    live.add(abort);
    const ended = () => (live.delete(abort), unfollow());
    let chunks;
    try {
      chunks = await prepareAnswer(
        v.value,
        {
          domain: idx.domain,
          retrieve: async (query, q) => {
            const a = await search.query(idx.source, query, { ...q, sectionChars: SECTION_CHARS, anyWords: true });
            if (a.status !== 'ready') throw new RetrievalNotReady(a.retryAfterSec, a.status === 'failed');
            return a.hits.map((h): Section => ({ path: h.path, title: h.metadata.title, heading: h.metadata.heading, text: h.text ?? '' }));
          },
          exists: (path) => (served ?? idx).routes.has(path), // a switch while it answered: the pages served now
          model: (messages, signal) => streamChat(o.model, messages, signal),
          threads,
        },
        abort.signal,
      );
    } catch (err) {
      ended();
      if (abort.signal.reason instanceof AnswerStopped) return unavailable(c, SHUTTING_DOWN, 5);
      if (err instanceof RetrievalNotReady) return unavailable(c, err.message, err.retryAfterSec);
      if (err instanceof ModelError) {
        log(`airlock serve: local-assistant: ${err.message}: ${err.detail}`);
        return unavailable(c, `the assistant is unavailable now: ${err.message}`, 30);
      }
      throw err;
    }
    const encoder = new TextEncoder();
    const it = chunks[Symbol.asyncIterator]();
    const stream = new ReadableStream<Uint8Array>(
      {
        async pull(ctrl) {
          const r = await it.next();
          if (r.done) {
            ended();
            ctrl.enqueue(encoder.encode('data: [DONE]\n\n'));
            return ctrl.close();
          }
          ctrl.enqueue(encoder.encode(`data: ${JSON.stringify(r.value)}\n\n`));
        },
        cancel() {
          ended();
          abort.abort();
          void it.return?.(undefined);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(stream, {
      status: 200,
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'x-vercel-ai-ui-message-stream': 'v1',
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
      },
    });
  });

  app.all('/discovery/v2/assistant/:domain/message', (c) => c.json({ error: 'use POST with the assistant request as a JSON body' }, 405, { Allow: 'POST' }));

  const close = () => {
    closing = true;
    for (const a of live) a.abort(new AnswerStopped(SHUTTING_DOWN));
  };
  return { app, claims: (_method, path) => PATH.test(path), close, onVersion: (idx) => void (served = idx) };
}

/**
 * Abort `abort` when the reader's request is aborted, until the returned function is called. The
 * request's signal may outlive the answer (the HTTP layer holds it until the request object is
 * collected), and a listener left on it would keep the answer, question included, alive with it.
 * Made here, the listener's closure holds `abort` alone, not the handler's variables.
 */
function follow(signal: AbortSignal, abort: AbortController): () => void {
  const onAbort = () => abort.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** The factory serve's feature options take (they make the local search it retrieves from). */
export const localAssistantFor =
  (o: LocalAssistantOptions) =>
  (search: LocalSearch): LocalAssistant =>
    createLocalAssistant(o, search);
