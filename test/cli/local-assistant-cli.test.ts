import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readUIMessageStream, type UIMessage } from 'ai';
import { cleanup, get, setActive, tempRoot, writeVersion } from '../serve/helpers.js';
import { airlockAsync, startServer, stopAll, type Server } from '../helpers/bin.js';
import { until } from '../helpers/wait.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { UiMessageChunkSchema, type UiMessageChunk } from '../../src/upstream/index.js';

/**
 * local-assistant through the built binary: `serve --assistant-model` against the emulator's
 * stand-in model (an OpenAI-compatible API). The service's assistant endpoint answers from the
 * served version's pages as an AI SDK v5 UI message stream that ai@5's readUIMessageStream reads.
 */
const DOMAIN = 'docs.example.com';
const KEY = 'sk-in-network-0123456789abcdef';
let root: string;
let store: string;
let emu: RunningEmulator;

beforeAll(async () => {
  root = await tempRoot('airlock-assistant-cli-');
  store = join(root, 'store');
  await writeVersion(
    store,
    'v1',
    {
      'index.html': '<!doctype html><title>Home</title><h1>Welcome</h1><p>Start with the guide.</p>',
      'guide/install.html':
        '<!doctype html><title>Install</title><h1>Install</h1><h2 id="linux">On Linux</h2><p>Run the installer as root. Then restart the daemon.</p>',
      'guide/tokens.html': '<!doctype html><title>Tokens</title><h1>Rotate tokens</h1><p>Tokens expire after thirty days. Rotate them from the console.</p>',
    },
    { domain: DOMAIN },
  );
  await setActive(store, 'v1');
  emu = await startEmulator();
});
afterAll(async () => {
  await stopAll();
  await emu.close();
  await cleanup(root);
});

const serve = (extra: string[], env: NodeJS.ProcessEnv = {}): Promise<Server> =>
  startServer(['serve', '--store', store, '--port', '0', ...extra], { env, timeoutMs: 15_000 });

const ask = (url: string, body: object) =>
  fetch(`${url.replace(/\/$/, '')}/discovery/v2/assistant/${DOMAIN}/message`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const body = (text: string, more: object = {}) => ({ fp: 'fp-1', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text }] }], ...more });

/** The answer's chunks (each checked against the UI message stream's schema) and the message readUIMessageStream builds of them. */
async function read(res: Response): Promise<{ chunks: UiMessageChunk[]; message: UIMessage | undefined }> {
  expect(res.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
  const text = await res.text();
  const data = text.split('\n\n').flatMap((e) => (e.startsWith('data: ') ? [e.slice(6)] : []));
  expect(data.at(-1)).toBe('[DONE]');
  const chunks = data.slice(0, -1).map((d) => UiMessageChunkSchema.parse(JSON.parse(d)));
  const stream = new ReadableStream({
    start(ctrl) {
      for (const c of chunks) ctrl.enqueue(c);
      ctrl.close();
    },
  });
  let message: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream: stream as never })) message = m;
  return { chunks, message };
}

describe('local-assistant (binary, against the stand-in model)', () => {
  let s: Server;
  beforeAll(async () => {
    s = await serve(['--assistant-model', `${emu.url}/v1`, '--assistant-model-name', 'stand-in'], { AIRLOCK_ASSISTANT_MODEL_KEY: KEY });
  });

  it('is reported on in /_airlock/features; the service assistant stays unavailable in air-gapped', async () => {
    const doc = JSON.parse((await get(s.url + '/_airlock/features')).body.toString()) as { features: Record<string, boolean> };
    expect(doc.features).toMatchObject({ assistant: false, localAssistant: true, localSearch: true });
  });

  it('answers from the served pages: readUIMessageStream reads it, every source is a 200 page of the version, the threadId continues', async () => {
    let res: Response | undefined;
    await until(async () => (res = await ask(s.url, body('how do I install on linux?'))).status === 200, { timeoutMs: 20_000 }); // 503 while the index is built
    const first = await read(res!);
    const text = first.message!.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
    expect(text).toMatch(/^According to \[1\] Install: .* I was given \[1\] \/guide\/install(#linux)?[,.]/);
    const sources = first.message!.parts.flatMap((p) => (p.type === 'source-url' ? [p.url] : []));
    expect(sources[0]).toMatch(/^\/guide\/install(#linux)?$/);
    for (const u of sources) expect((await get(s.url + u.replace(/#.*$/, ''))).status).toBe(200);
    const finish = first.chunks.at(-1) as { type: string; messageMetadata: { threadId: string } };
    expect(finish.type).toBe('finish');
    const again = await read(await ask(s.url, body('and tokens?', { threadId: finish.messageMetadata.threadId })));
    expect(again.message!.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('')).toMatch(/^Following up \(turn 2\): /);
  });

  it('refuses what the service refuses: a bad body (400, problems listed), another domain (404), another method (405)', async () => {
    const bad = await ask(s.url, { fp: '', messages: [] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { problems: unknown[] }).problems.length).toBeGreaterThan(0);
    const other = await fetch(`${s.url.replace(/\/$/, '')}/discovery/v2/assistant/other.example/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body('x')),
    });
    expect(other.status).toBe(404);
    const get405 = await fetch(`${s.url.replace(/\/$/, '')}/discovery/v2/assistant/${DOMAIN}/message`);
    expect([get405.status, get405.headers.get('allow')]).toEqual([405, 'POST']);
  });

  it('a model that is down: 503 with Retry-After before any stream, said in words, the key never printed', async () => {
    let stderr = '';
    const down = await startServer(['serve', '--store', store, '--port', '0', '--assistant-model', 'http://127.0.0.1:9/v1', '--assistant-model-name', 'm'], {
      env: { AIRLOCK_ASSISTANT_MODEL_KEY: KEY },
      timeoutMs: 15_000,
      onStderr: (all) => (stderr = all),
    });
    let res: Response | undefined;
    await until(
      async () => (res = await ask(down.url, body('install'))).status !== 503 || ((await res.clone().json()) as { error: string }).error.includes('model'),
      {
        timeoutMs: 20_000,
      },
    );
    expect([res!.status, res!.headers.get('retry-after')]).toEqual([503, '30']);
    expect(((await res!.json()) as { error: string }).error).toMatch(/^the assistant is unavailable now: the model could not be reached/);
    await until(() => stderr.includes('local-assistant'), { timeoutMs: 5_000 });
    expect(stderr).not.toContain(KEY);
  });

  it('SIGTERM while an answer streams: the answer ends at once with an error part saying so, and the server exits', async () => {
    // a model that says one word, then nothing more (until the test ends)
    const stalled = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'Run ' } }] })}\n\n`);
    });
    await new Promise<void>((r) => stalled.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}/v1`;
      const srv = await serve(['--assistant-model', url, '--assistant-model-name', 'm']);
      let res: Response | undefined;
      await until(async () => (res = await ask(srv.url, body('install'))).status === 200, { timeoutMs: 20_000 });
      const reader = res!.body!.getReader();
      let text = '';
      while (!text.includes('text-delta')) text += new TextDecoder().decode((await reader.read()).value);
      const t0 = performance.now();
      const exit = srv.stop();
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
      expect(text).toContain(`"type":"error","errorText":"the server is shutting down; ask again in a moment"`);
      expect(text).not.toContain('"type":"finish"');
      expect(await exit).toBe(0);
      expect(performance.now() - t0).toBeLessThan(5_000); // not the 10 s grace
    } finally {
      stalled.closeAllConnections();
      stalled.close();
    }
  });

  it('a switch while it answers: the sources are the pages the version served then has (none that now answer 404)', async () => {
    const switching = join(root, 'switching');
    const pages = {
      'index.html': '<!doctype html><title>Home</title><h1>Welcome</h1><p>Start with the guide.</p>',
      'guide/install.html': '<!doctype html><title>Install</title><h1>Install</h1><p>Run the installer as root.</p>',
    };
    await writeVersion(switching, 'v1', pages, { domain: DOMAIN });
    await setActive(switching, 'v1');
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    // a model that cites [1] (the install page), then waits for the switch before it ends
    const slow = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'Run the installer [1]. ' } }] })}\n\n`);
      void released.then(() => res.end(`data: ${JSON.stringify({ choices: [{ delta: { content: 'Done.' } }] })}\n\ndata: [DONE]\n\n`));
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/v1`;
      const srv = await startServer(['serve', '--store', switching, '--port', '0', '--assistant-model', url, '--assistant-model-name', 'm'], {
        timeoutMs: 15_000,
      });
      let res: Response | undefined;
      await until(async () => (res = await ask(srv.url, body('install'))).status === 200, { timeoutMs: 20_000 });
      const reader = res!.body!.getReader();
      let text = '';
      while (!text.includes('text-delta')) text += new TextDecoder().decode((await reader.read()).value);
      await writeVersion(switching, 'v2', { 'index.html': pages['index.html'] }, { domain: DOMAIN });
      await setActive(switching, 'v2');
      await until(async () => (await get(srv.url + '/guide/install')).status === 404, { timeoutMs: 10_000 });
      release();
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
      expect(text).toContain('"type":"finish"');
      expect(text).not.toContain('"type":"source-url"');
    } finally {
      release();
      slow.closeAllConnections();
      slow.close();
    }
  });

  it('the model can be given in a values file (localAssistant.model), as the chart does', async () => {
    const values = join(root, 'values.yaml');
    await writeFile(values, `store: ${store}\nlocalAssistant:\n  model:\n    url: ${emu.url}/v1\n    name: stand-in\n`);
    const v = await startServer(['serve', '--values', values, '--port', '0'], { timeoutMs: 15_000 });
    const doc = JSON.parse((await get(v.url + '/_airlock/features')).body.toString()) as { features: Record<string, boolean> };
    expect(doc.features.localAssistant).toBe(true);
    const off = join(root, 'values-off.yaml');
    await writeFile(off, `store: ${store}\nfeatures:\n  local-assistant: true\n`);
    const refused = await airlockAsync(['serve', '--values', off, '--port', '0']);
    expect([refused.status, refused.stderr]).toEqual([2, expect.stringContaining('local-assistant answers with a model your network runs')]);
  });

  it('local-assistant without a model, or half a model, is a usage error (exit 2)', async () => {
    const none = await airlockAsync(['serve', '--store', store, '--port', '0', '--enable', 'local-assistant']);
    expect([none.status, none.stderr]).toEqual([2, expect.stringContaining('local-assistant answers with a model your network runs')]);
    const half = await airlockAsync(['serve', '--store', store, '--port', '0', '--assistant-model', 'http://127.0.0.1:9/v1']);
    expect([half.status, half.stderr]).toEqual([2, expect.stringContaining('--assistant-model and --assistant-model-name go together')]);
    const creds = await airlockAsync(['serve', '--store', store, '--port', '0', '--assistant-model', 'http://u:pw-SECRET@h/v1', '--assistant-model-name', 'm']);
    expect([creds.status, creds.stderr]).toEqual([2, expect.stringContaining('(with credentials)')]);
    expect(creds.stderr).not.toContain('pw-SECRET');
    // The service's assistant (relayed, on in cloud) and local-assistant would answer the same endpoint: one is chosen.
    const both = await airlockAsync([
      'serve',
      '--store',
      store,
      '--port',
      '0',
      '--deployment',
      'cloud',
      '--assistant-model',
      'http://127.0.0.1:9/v1',
      '--assistant-model-name',
      'm',
    ]);
    expect([both.status, both.stderr]).toEqual([2, expect.stringContaining('both would answer the same endpoint')]);
  });
});
