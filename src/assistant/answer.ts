import { randomBytes } from 'node:crypto';
import { question, type ParsedAssistantRequest, type UiMessageChunk } from '../upstream/index.js';
import { ModelError, type ChatMessage } from './model.js';
import { buildPrompt, type Section } from './prompt.js';
import { searchQuery } from './query.js';
import type { Threads } from './threads.js';

/**
 * The service's assistant answered here (pure but for the injected parts): the question's best
 * sections retrieved from the served version's local search, quoted to the organisation's own
 * model, whose words are relayed as an AI SDK v5 UI message stream. `prepareAnswer` waits for the
 * model's first words before anything is sent, so a model that is down or silent is a 503 with
 * Retry-After (ModelError), never a stream that hangs; a failure once it streams is an `error`
 * part. Nothing is logged here: questions and answers stay out of the logs.
 */
export interface AnswerDeps {
  domain: string;
  /** The served version's best sections for a query (its local search); RetrievalNotReady while its index is being built. */
  retrieve(query: string, o: { pageSize: number; page?: string; language?: string }): Promise<Section[]>;
  /** Is this a page of the served version (answered 200)? Sources name only those. */
  exists(path: string): boolean;
  model(messages: ChatMessage[], signal: AbortSignal): AsyncIterable<string>;
  threads: Threads;
}

/** The local search index is still being built: ask again after `retryAfterSec`. */
export class RetrievalNotReady extends Error {
  constructor(
    readonly retryAfterSec: number,
    /** The index is there but its search did not answer (busy, or failed): said as such, not as being prepared. */
    busy = false,
  ) {
    super(busy ? 'the search of this site is busy or failed; ask again shortly' : 'the search index of this site is being prepared; ask again shortly');
  }
}

/** The answer was stopped by the server (it is shutting down): said to the reader in an `error` part. */
export class AnswerStopped extends Error {}

/** Context items (what the reader selected) ask the search too, for this many sections more. */
const CONTEXT_SECTIONS = 2;

export async function prepareAnswer(req: ParsedAssistantRequest, d: AnswerDeps, signal: AbortSignal): Promise<AsyncGenerator<UiMessageChunk>> {
  const q = question(req);
  const context = (req.context ?? []).map((c) => ({ type: c.type, value: c.value, ...(c.path ? { path: c.path } : {}) }));
  const where = { page: req.currentPath, language: req.filter?.language };
  // The search is asked for the question's subject words (query.ts), not its function words.
  const found = await d.retrieve(searchQuery(q), { pageSize: req.retrievalPageSize, ...where });
  const selected = context
    .map((c) => c.value)
    .join(' ')
    .slice(0, 500)
    .trim();
  const more = selected === '' ? [] : await d.retrieve(searchQuery(selected), { pageSize: CONTEXT_SECTIONS, ...where });
  const sections = [...found, ...more.filter((m) => !found.some((f) => f.path === m.path))];
  const thread = d.threads.open(req.threadId, req.fp);
  const messages = buildPrompt({ domain: d.domain, sections, history: thread.history, question: q, context, currentPath: req.currentPath });
  const words = d.model(messages, signal)[Symbol.asyncIterator]();
  const first = await words.next(); // a ModelError here: nothing sent yet (503)
  const done = (answer: string) => d.threads.add(thread.id, req.fp, { question: q, answer });
  return relay(first, words, sections, { threadId: thread.id, done, exists: d.exists, signal });
}

async function* relay(
  first: IteratorResult<string>,
  words: AsyncIterator<string>,
  sections: readonly Section[],
  o: { threadId: string; done: (answer: string) => void; exists: (path: string) => boolean; signal: AbortSignal },
): AsyncGenerator<UiMessageChunk> {
  // An answer the server stopped (the model's words end when aborted) is cut, not complete: said, not kept.
  const stopped = () => (o.signal.reason instanceof AnswerStopped ? o.signal.reason.message : null);
  const textId = `txt_${randomBytes(6).toString('hex')}`;
  yield { type: 'start', messageId: `msg_${randomBytes(10).toString('hex')}` };
  yield { type: 'start-step' };
  yield { type: 'text-start', id: textId };
  let answer = '';
  let next = first;
  try {
    while (!next.done) {
      answer += next.value;
      yield { type: 'text-delta', id: textId, delta: next.value };
      next = await words.next();
    }
  } catch (err) {
    yield { type: 'text-end', id: textId };
    yield { type: 'error', errorText: stopped() ?? (err instanceof ModelError ? err.message : 'the model broke off its answer') };
    return;
  }
  yield { type: 'text-end', id: textId };
  const stop = stopped();
  if (stop !== null) return yield { type: 'error', errorText: stop };
  for (const [i, s] of cited(answer, sections).entries())
    if (o.exists(s.path.replace(/#.*$/, ''))) yield { type: 'source-url', sourceId: `src_${i + 1}`, url: s.path, title: s.title };
  yield { type: 'finish-step' };
  yield { type: 'finish', messageMetadata: { threadId: o.threadId } };
  o.done(answer);
}

/** The sections an answer cites (`[2]`), one per page, in the order first cited; none when it cites none. */
export function cited(answer: string, sections: readonly Section[]): Section[] {
  const numbers = [...answer.matchAll(/\[(\d{1,2})\]/g)].map((m) => Number(m[1]) - 1).filter((n) => n >= 0 && n < sections.length);
  const chosen = numbers.map((n) => sections[n]!);
  const pages = new Set<string>();
  return chosen.filter((s) => {
    const page = s.path.replace(/#.*$/, '');
    if (pages.has(page)) return false;
    pages.add(page);
    return true;
  });
}
