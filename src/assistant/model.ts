import { Agent, request, type Dispatcher } from 'undici';
import { describeNetError, sseData } from '../upstream/index.js';
import { plainText } from '../util/terminal.js';
import { redact } from '../util/redact.js';
import { escapeRegExp } from '../util/regexp.js';

/**
 * A chat model the organisation runs in its own network, behind an OpenAI-compatible API (vLLM,
 * llama.cpp's server, Ollama, TGI): `POST {url}/chat/completions` with `stream: true`, answered as
 * server-sent events of `{choices: [{delta: {content}}]}` ending with `[DONE]`. A reader is
 * tolerant of what such servers add (role-only deltas, usage chunks, comments); a writer is
 * exact: only the fields below are sent, and the key only in the Authorization header.
 */
export interface ModelOptions {
  /** The API's base URL (`http://llm.internal:8000/v1`); `/chat/completions` is added unless given. */
  url: string;
  /** The model's name on that server (`--assistant-model-name`). */
  name: string;
  /** Bearer key (`AIRLOCK_ASSISTANT_MODEL_KEY[_FILE]`), or null for none. Never printed. */
  key: string | null;
  timeouts?: Partial<ModelTimeouts>;
  /** An answer is cut after this many characters (a model that streams forever). */
  maxAnswerChars?: number;
  /** The longest answer the model may write, in tokens (`max_tokens`). */
  maxTokens?: number;
  dispatcher?: Dispatcher;
}

export interface ModelTimeouts {
  /** TCP/TLS connect. */
  connectMs: number;
  /** From the request sent to the first token: a model queueing or loading answers late. */
  firstTokenMs: number;
  /** The longest silence between two chunks once it streams. */
  idleMs: number;
  /** The whole answer. */
  totalMs: number;
}
export const DEFAULT_MODEL_TIMEOUTS: ModelTimeouts = { connectMs: 5_000, firstTokenMs: 60_000, idleMs: 30_000, totalMs: 300_000 };
export const DEFAULT_MAX_ANSWER_CHARS = 20_000;

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A model that failed, in words for the reader (no host, no key); `beforeAnswer`: nothing was streamed yet (503 + Retry-After). */
export class ModelError extends Error {
  constructor(
    message: string,
    /** For the log: what happened, with the model's host (never its key). */
    readonly detail: string,
    readonly beforeAnswer: boolean,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

export function completionsUrl(base: string): string {
  const u = base.replace(/\/+$/, '');
  return u.endsWith('/chat/completions') ? u : `${u}/chat/completions`;
}

/** The model's answer as text pieces, in order, as they arrive. Aborting `signal` ends the call. */
export async function* streamChat(o: ModelOptions, messages: readonly ChatMessage[], signal: AbortSignal): AsyncGenerator<string> {
  const t = { ...DEFAULT_MODEL_TIMEOUTS, ...o.timeouts };
  const url = completionsUrl(o.url);
  const abort = new AbortController();
  const onAbort = () => abort.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  let started = false;
  let timer: NodeJS.Timeout | null = null;
  let late: string | null = null;
  const wait = (ms: number, what: string) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      late = what;
      abort.abort();
    }, ms);
  };
  const total = setTimeout(() => {
    late = `did not finish its answer within ${t.totalMs / 1000} s`;
    abort.abort();
  }, t.totalMs);
  // Our own timers bound the first token and each silence (a model may send its headers at once and think for a minute).
  const dispatcher = o.dispatcher ?? new Agent({ connect: { timeout: t.connectMs }, headersTimeout: 0, bodyTimeout: 0 });
  // What a model host sends back (a type, a chunk) may echo the key, in any case: never said with it.
  const echo = o.key === null ? null : new RegExp(escapeRegExp(o.key), 'gi');
  const scrub = (text: string) => redact(echo === null ? text : text.replace(echo, '[REDACTED]'));
  const fail = (message: string, detail: string) => new ModelError(scrub(message), scrub(detail), !started);
  try {
    wait(t.firstTokenMs, `sent no answer within ${t.firstTokenMs / 1000} s`);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream', 'user-agent': 'airlock-assistant' };
    if (o.key !== null) headers.authorization = `Bearer ${o.key}`;
    const body = JSON.stringify({ model: o.name, messages, stream: true, ...(o.maxTokens ? { max_tokens: o.maxTokens } : {}) });
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, { method: 'POST', headers, body, signal: abort.signal, dispatcher });
    } catch (err) {
      if (signal.aborted) return;
      if (late !== null) throw fail(`the model ${late}`, late);
      const f = describeNetError(err, { url, connectTimeoutMs: t.connectMs, headersTimeoutMs: t.firstTokenMs });
      throw fail(`the model could not be reached${f ? ` (${/\(([^()]+)\)$/.exec(f.reason)?.[1] ?? 'the exchange failed'})` : ''}`, f?.reason ?? String(err));
    }
    if (res.statusCode !== 200) {
      res.body.destroy();
      throw fail(`the model answered HTTP ${res.statusCode}`, `HTTP ${res.statusCode} from ${new URL(url).host}`);
    }
    const type = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    const encoding = String(res.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    if (type !== 'text/event-stream' || (encoding !== '' && encoding !== 'identity')) {
      res.body.destroy();
      const what = type !== 'text/event-stream' ? `type ${JSON.stringify(plainText(type.slice(0, 60)) || '(none)')}` : 'a compressed body';
      throw fail(`the model answered with ${what}, not a stream of its answer`, `${what} from ${new URL(url).host}`);
    }
    let chars = 0;
    const max = o.maxAnswerChars ?? DEFAULT_MAX_ANSWER_CHARS;
    const filter = new KeyFilter(o.key);
    try {
      for await (const data of sseData(bounded(res.body as AsyncIterable<Uint8Array>, MAX_STREAM_BYTES, fail), { maxEventBytes: MAX_EVENT_BYTES })) {
        const piece = deltaOf(data);
        if (piece === null) throw fail('the model sent something that is not a chat answer', `not a chat completion chunk: ${plainText(data.slice(0, 100))}`);
        if (piece === '') continue;
        if (!started) started = true;
        wait(t.idleMs, `stopped answering for ${t.idleMs / 1000} s`);
        const room = max - chars;
        chars += piece.length;
        const out = filter.push(piece.slice(0, Math.max(0, room)));
        if (out !== '') yield out;
        if (chars >= max) break; // a model that streams forever is cut here
      }
      const rest = filter.end();
      if (rest !== '') yield rest;
    } catch (err) {
      const rest = filter.end(); // what came before the failure is the reader's
      if (rest !== '' && !signal.aborted) yield rest;
      if (err instanceof ModelError) throw err;
      if (signal.aborted) return;
      if (err instanceof Error && err.message.startsWith('an event longer')) throw fail(`the model sent ${err.message}`, err.message);
      if (late !== null) throw fail(`the model ${late}`, late);
      throw fail('the model broke off its answer', describeNetError(err, { url })?.reason ?? 'the stream ended');
    }
    if (!started) throw fail('the model sent an empty answer', 'no content in the stream');
  } finally {
    if (timer) clearTimeout(timer);
    clearTimeout(total);
    signal.removeEventListener('abort', onAbort);
    abort.abort();
    if (o.dispatcher === undefined) void dispatcher.close().catch(() => {});
  }
}

/** The text of one streamed chunk ('' for one without: a role, a usage, a finish); null for what is no chat chunk. */
function deltaOf(data: string): string | null {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as { choices?: unknown; error?: unknown };
  if (o.error !== undefined) return null;
  if (!Array.isArray(o.choices)) return ''; // a usage chunk
  const content = (o.choices[0] as { delta?: { content?: unknown } } | undefined)?.delta?.content;
  return typeof content === 'string' ? content : '';
}

/** The most bytes a model's stream may bring (an answer of DEFAULT_MAX_ANSWER_CHARS in its JSON chunks is far below). */
const MAX_STREAM_BYTES = 16 * 1024 * 1024;
/** The longest single event: one chunk of a chat stream is a few hundred bytes. */
const MAX_EVENT_BYTES = 1024 * 1024;

async function* bounded(body: AsyncIterable<Uint8Array>, max: number, fail: (message: string, detail: string) => ModelError): AsyncGenerator<Uint8Array> {
  let n = 0;
  for await (const chunk of body) {
    n += chunk.byteLength;
    if (n > max) throw fail(`the model sent more than ${max / (1024 * 1024)} MiB`, `more than ${max} bytes in its stream`);
    yield chunk;
  }
}

/**
 * The model's text with the key it was given (a host that echoes its Authorization header) and
 * any service key (`svc_…`) replaced before a reader sees it. Text is let out a word at a time
 * (keys hold no whitespace), so a key the model streams in pieces is never let out in part.
 */
export class KeyFilter {
  private held = '';
  constructor(private readonly key: string | null) {}

  push(piece: string): string {
    this.held += piece;
    const space = Math.max(this.held.lastIndexOf(' '), this.held.lastIndexOf('\n'), this.held.lastIndexOf('\t'));
    // A run with no whitespace longer than any key: let out all but what could be the start of one.
    const cut = space >= 0 ? space + 1 : this.held.length > 8192 ? this.held.length - 4096 : 0;
    const out = this.held.slice(0, cut);
    this.held = this.held.slice(cut);
    return this.clean(out);
  }

  end(): string {
    const out = this.clean(this.held);
    this.held = '';
    return out;
  }

  private clean(s: string): string {
    return redact(this.key !== null && s.includes(this.key) ? s.replaceAll(this.key, '[REDACTED]') : s);
  }
}
