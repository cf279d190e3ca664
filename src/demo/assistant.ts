import { localAssistantFor } from '../assistant/route.js';
import type { ModelOptions } from '../assistant/model.js';
import { resolveFeatures } from '../features/resolve.js';
import { DEFAULT_LIMITS } from '../relay/limits.js';
import { featureOptions } from '../serve/features.js';
import { plainText } from '../util/terminal.js';
import { DEMO_DOMAIN } from './chain.js';

/**
 * The demo's site answers its assistant itself (local-assistant), from the served pages and the
 * emulator's deterministic stand-in model (`<emulator>/v1`, an OpenAI-compatible API, any model
 * name): the same routes `serve --assistant-model URL --assistant-model-name NAME` mounts, and no
 * request leaves 127.0.0.1. `askDemo` asks it one question over HTTP, as a reader's widget does.
 */
export const DEMO_MODEL_NAME = 'stand-in';
export const DEMO_QUESTION = 'How do I manage access tokens?';

export const demoModel = (emulatorUrl: string): ModelOptions => ({ url: `${emulatorUrl.replace(/\/+$/, '')}/v1`, name: DEMO_MODEL_NAME, key: null });

/** air-gapped, with local-assistant on: what `serve --deployment air-gapped --assistant-model …` resolves to. */
export function demoFeatures(emulatorUrl: string, log: (line: string) => void) {
  const assistant = localAssistantFor({ model: demoModel(emulatorUrl), limits: DEFAULT_LIMITS, log });
  return featureOptions(resolveFeatures({ deployment: 'air-gapped', enable: ['local-assistant'] }), null, { log, assistant });
}

/** The assistant's endpoint on a served origin (the service's path, answered by local-assistant). */
export const assistantEndpoint = (origin: string): string => new URL(`discovery/v2/assistant/${DEMO_DOMAIN}/message`, origin).href;

/** The body a reader's widget sends for one question (the service's schema). */
export const questionBody = (question: string) => ({ fp: 'airlock-demo', messages: [{ id: 'q1', role: 'user', parts: [{ type: 'text', text: question }] }] });

export interface DemoAnswer {
  /** The answer's first line. */
  firstLine: string;
  /** The pages it cites (the stream's source-url parts), as paths of this origin. */
  sources: string[];
}

/**
 * Ask the served site's assistant one question and read its UI message stream. While the site's
 * search index is still being built the endpoint answers 503 (Retry-After): asked again every
 * 100 ms, within `timeoutMs`.
 */
export async function askDemo(origin: string, question: string, signal?: AbortSignal, timeoutMs = 30_000): Promise<DemoAnswer> {
  const deadline = Date.now() + timeoutMs;
  const bounded = signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  for (;;) {
    const res = await fetch(assistantEndpoint(origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(questionBody(question)),
      signal: bounded,
    });
    if (res.status === 503 && Date.now() < deadline) {
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, 100));
      bounded.throwIfAborted();
      continue;
    }
    if (!res.ok) throw new Error(`the assistant answered HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
    return readAnswer(await res.text());
  }
}

/** The text and sources of an AI SDK v5 UI message stream (`data: {json}` events, then `data: [DONE]`). */
export function readAnswer(stream: string): DemoAnswer {
  let text = '';
  const sources: string[] = [];
  for (const event of stream.split('\n\n')) {
    if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
    const part = JSON.parse(event.slice(6)) as { type?: string; delta?: string; url?: string; errorText?: string };
    if (part.type === 'text-delta' && typeof part.delta === 'string') text += part.delta;
    else if (part.type === 'source-url' && typeof part.url === 'string') sources.push(part.url);
    else if (part.type === 'error') throw new Error(`the assistant broke off: ${part.errorText ?? 'no reason given'}`);
  }
  const firstLine = text.trim().split('\n')[0] ?? '';
  if (firstLine === '') throw new Error('the assistant gave an empty answer');
  return { firstLine, sources };
}

/**
 * What the demo prints once it serves: that the site has an assistant, one question asked through
 * its endpoint with the answer's first line and sources, and the commands a reader would use.
 * A failure to answer is said and the demo serves on.
 */
export async function showAssistant(o: {
  origin: string;
  store: string;
  emulatorUrl: string;
  log: (line: string) => void;
  signal?: AbortSignal;
}): Promise<void> {
  const model = demoModel(o.emulatorUrl);
  const say = (label: string, text: string) => o.log(`airlock demo: ${label.padEnd(8)} ${text}`);
  say(
    'assist:',
    `the site has an assistant (its widget on every page): local-assistant answers it from the served pages with the emulator's stand-in model at ${model.url}`,
  );
  say('ask:', JSON.stringify(DEMO_QUESTION));
  try {
    const answer = await askDemo(o.origin, DEMO_QUESTION, o.signal);
    say('answer:', plainText(answer.firstLine));
    say('sources:', answer.sources.length > 0 ? answer.sources.map((s) => plainText(s)).join(', ') : '(none cited)');
  } catch (err) {
    if (o.signal?.aborted) return;
    say('answer:', `none: ${err instanceof Error ? err.message : String(err)} (the site serves on)`);
    return;
  }
  const body = JSON.stringify(questionBody(DEMO_QUESTION));
  say('try:', `curl -sN ${assistantEndpoint(o.origin)} -H 'content-type: application/json' -d '${body}'`);
  say('or:', `airlock serve --store ${o.store} --port 0 --assistant-model ${model.url} --assistant-model-name ${model.name}   (while the demo runs)`);
}
