import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cited, prepareAnswer, type AnswerDeps } from '../../src/assistant/answer.js';
import { ModelError, streamChat, type ChatMessage } from '../../src/assistant/model.js';
import type { Section } from '../../src/assistant/prompt.js';
import { Threads } from '../../src/assistant/threads.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { AssistantRequestSchema, UiMessageChunkSchema, type UiMessageChunk } from '../../src/upstream/index.js';

/** The assistant answered locally: retrieval (injected), the prompt, the emulator's stand-in model, the UI message stream. */
let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(async () => emu.close());

const SECTIONS: Record<string, Section[]> = {
  install: [
    { path: '/guide/install#linux', title: 'Install', heading: 'Linux', text: 'Run the installer as root. Then restart the service.' },
    { path: '/guide/upgrade', title: 'Upgrade', heading: '', text: 'Upgrades keep your settings.' },
    { path: '/gone', title: 'Gone', heading: '', text: 'A page the served version does not have.' },
  ],
};

function deps(over: Partial<AnswerDeps> = {}, asked: string[] = []): AnswerDeps {
  return {
    domain: 'docs.example.com',
    retrieve: async (q, o) => {
      asked.push(q);
      return (SECTIONS[q.split(' ')[0]!] ?? []).slice(0, o.pageSize);
    },
    exists: (p) => p !== '/gone',
    model: (messages: ChatMessage[], signal: AbortSignal) => streamChat({ url: `${emu.url}/v1`, name: 'stand-in', key: null }, messages, signal),
    threads: new Threads(),
    ...over,
  };
}

const request = (text: string, more: Record<string, unknown> = {}) =>
  AssistantRequestSchema.parse({ fp: 'fp-1', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text }] }], ...more });

async function all(chunks: AsyncIterable<UiMessageChunk>): Promise<UiMessageChunk[]> {
  const out: UiMessageChunk[] = [];
  for await (const c of chunks) out.push(UiMessageChunkSchema.parse(c));
  return out;
}
const textOf = (chunks: UiMessageChunk[]) => chunks.map((c) => (c.type === 'text-delta' ? (c as { delta: string }).delta : '')).join('');

describe('the local assistant', () => {
  it('answers from the retrieved sections as a UI message stream: start, text, one source per cited page that exists, finish with threadId', async () => {
    const chunks = await all(await prepareAnswer(request('install please'), deps(), new AbortController().signal));
    expect(chunks.map((c) => c.type)).toEqual([
      'start',
      'start-step',
      'text-start',
      ...Array(chunks.filter((c) => c.type === 'text-delta').length).fill('text-delta'),
      'text-end',
      'source-url',
      'source-url',
      'finish-step',
      'finish',
    ]);
    expect(textOf(chunks)).toBe(
      'According to [1] Install: Linux: Run the installer as root. I was given [1] /guide/install#linux, [2] /guide/upgrade, [3] /gone.',
    );
    // Cited [1], [2], [3]: /gone is no page of the served version, so it is not offered as a source.
    expect(chunks.filter((c) => c.type === 'source-url').map((c) => (c as { url: string }).url)).toEqual(['/guide/install#linux', '/guide/upgrade']);
    expect((chunks.at(-1) as { messageMetadata: { threadId: string } }).messageMetadata.threadId).toMatch(/^thr_[0-9a-f]{24}$/);
  });

  it('retrievalPageSize bounds the sections given to the model; no match is said, not guessed', async () => {
    const one = await all(await prepareAnswer(request('install', { retrievalPageSize: 1 }), deps(), new AbortController().signal));
    expect(textOf(one)).toContain('I was given [1] /guide/install#linux.');
    const none = await all(await prepareAnswer(request('quantum'), deps(), new AbortController().signal));
    expect(textOf(none)).toBe('The documentation I was given does not answer that.');
    expect(none.some((c) => c.type === 'source-url')).toBe(false);
  });

  it('a follow-up with the threadId continues the conversation; another fp naming it starts afresh', async () => {
    const d = deps();
    const first = await all(await prepareAnswer(request('install'), d, new AbortController().signal));
    const threadId = (first.at(-1) as { messageMetadata: { threadId: string } }).messageMetadata.threadId;
    const second = await all(await prepareAnswer(request('install again', { threadId }), d, new AbortController().signal));
    expect(textOf(second)).toMatch(/^Following up \(turn 2\): /);
    expect((second.at(-1) as { messageMetadata: { threadId: string } }).messageMetadata.threadId).toBe(threadId);
    const other = await all(await prepareAnswer(request('install', { threadId, fp: 'fp-2' }), d, new AbortController().signal));
    expect(textOf(other)).not.toContain('Following up');
    expect((other.at(-1) as { messageMetadata: { threadId: string } }).messageMetadata.threadId).not.toBe(threadId);
  });

  it('what the reader selected asks the search too, and is quoted to the model with the page it is on', async () => {
    const asked: string[] = [];
    let prompt: ChatMessage[] = [];
    const d = deps(
      {
        model: (m, s) => {
          prompt = m;
          return streamChat({ url: `${emu.url}/v1`, name: 'stand-in', key: null }, m, s);
        },
      },
      asked,
    );
    const req = request('what does this do?', { context: [{ type: 'code', value: 'install --root', path: '/guide/install' }], currentPath: '/guide/install' });
    await all(await prepareAnswer(req, d, new AbortController().signal));
    expect(asked).toEqual(['what does this do', 'install root']); // a question made of function words only is asked as it is
    expect(prompt.at(-1)!.content).toContain('Code the reader selected on /guide/install:\ninstall --root');
    expect(prompt[0]!.content).toContain('The reader is on the page "/guide/install".');
  });

  it('a model that fails before answering: prepareAnswer rejects (the route answers 503); one that breaks off: an error part', async () => {
    const down = deps({ model: () => streamChat({ url: 'http://127.0.0.1:9/v1', name: 'm', key: null }, [], new AbortController().signal) });
    await expect(prepareAnswer(request('install'), down, new AbortController().signal)).rejects.toMatchObject({ beforeAnswer: true });
    const breaks = deps({
      model: async function* () {
        yield 'Half';
        throw new ModelError('the model broke off its answer', 'reset', false);
      },
    });
    const chunks = await all(await prepareAnswer(request('install'), breaks, new AbortController().signal));
    expect(chunks.slice(-2)).toEqual([
      { type: 'text-end', id: expect.any(String) },
      { type: 'error', errorText: 'the model broke off its answer' },
    ]);
  });

  it('cited(): sections in the order first cited, one per page; none when the answer cites none', () => {
    const s = SECTIONS.install!;
    const twice = [...s, { ...s[0]!, path: '/guide/install#mac' }];
    expect(cited('see [2] and [1] and [4]', twice).map((x) => x.path)).toEqual(['/guide/upgrade', '/guide/install#linux']);
    expect(cited('The sections do not say.', s)).toEqual([]);
    expect(cited('[9] [0]', s)).toEqual([]);
  });
});
