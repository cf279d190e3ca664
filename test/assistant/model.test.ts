import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ModelError, streamChat, type ModelOptions } from '../../src/assistant/model.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';

/**
 * The client of an organisation's own model (OpenAI-compatible chat API, streamed): against the
 * emulator's stand-in model, and against models that misbehave: down, failing, silent, stalling,
 * sending garbage, streaming forever. Each ends in words, promptly, never with the key in them.
 */
let server: Server | null = null;
let emu: RunningEmulator | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
  await emu?.close();
  emu = null;
});

async function fake(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const KEY = 'sk-local-secret-0123456789';
const SSE = { 'content-type': 'text/event-stream' };
const ask = [
  { role: 'system' as const, content: 'Sections:\n\n[1] Install — /guide/install\nRun the installer. Then restart.' },
  { role: 'user' as const, content: 'how do I install?' },
];

async function collect(o: ModelOptions, signal = new AbortController().signal): Promise<{ text: string; error: ModelError | null }> {
  let text = '';
  try {
    for await (const piece of streamChat(o, ask, signal)) text += piece;
    return { text, error: null };
  } catch (err) {
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).message).not.toContain(KEY);
    expect((err as ModelError).detail).not.toContain(KEY);
    return { text, error: err as ModelError };
  }
}

describe('the model client', () => {
  it("streams the emulator's stand-in model's answer, built from the sections it was given", async () => {
    emu = await startEmulator();
    const r = await collect({ url: `${emu.url}/v1`, name: 'stand-in', key: null });
    expect(r).toEqual({ text: 'According to [1] Install: Run the installer. I was given [1] /guide/install.', error: null });
  });

  it('sends the model name, the messages and stream: true, and the key only as a bearer token', async () => {
    let seen: { auth?: string; body?: unknown; path?: string } = {};
    const url = await fake((req, res, body) => {
      seen = { auth: req.headers.authorization, body: JSON.parse(body), path: req.url };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"choices":[{"delta":{"content":"ok"}}]}\n\ndata: [DONE]\n\n');
    });
    expect((await collect({ url, name: 'llama-3-70b', key: KEY })).text).toBe('ok');
    expect(seen).toEqual({ auth: `Bearer ${KEY}`, path: '/v1/chat/completions', body: { model: 'llama-3-70b', messages: ask, stream: true } });
  });

  it('a model host that is down: said before any answer (a 503 for the reader), naming no host', async () => {
    const url = await fake(() => {});
    server!.close();
    server = null;
    const r = await collect({ url: url.replace(/:\d+\//, ':9/'), name: 'm', key: KEY });
    expect(r.error?.beforeAnswer).toBe(true);
    expect(r.error?.message).toMatch(/^the model could not be reached/);
    expect(r.error?.message).not.toContain('127.0.0.1');
  });

  it('an error status, garbage, an error object or an empty answer: each said in words', async () => {
    const cases: Array<[(res: ServerResponse) => void, RegExp]> = [
      [(res) => res.writeHead(500).end('{"error":{"message":"CUDA out of memory"}}'), /^the model answered HTTP 500$/],
      [(res) => res.writeHead(200, SSE).end('data: <html>\n\n'), /not a chat answer/],
      [(res) => res.writeHead(200, SSE).end('data: {"error":{"message":"overloaded"}}\n\n'), /not a chat answer/],
      [(res) => res.writeHead(200, SSE).end('data: {"choices":[{"delta":{"role":"assistant"}}]}\n\ndata: [DONE]\n\n'), /empty answer/],
      [(res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>'), /^the model answered with type "text\/html", not a stream/],
      [(res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[]}'), /type "application\/json", not a stream/],
      [(res) => res.writeHead(200, { ...SSE, 'content-encoding': 'gzip' }).end(), /a compressed body, not a stream/],
    ];
    for (const [answer, said] of cases) {
      const url = await fake((_q, res) => answer(res));
      const r = await collect({ url, name: 'm', key: KEY });
      expect(r.error?.message, String(said)).toMatch(said);
      expect(r.error?.beforeAnswer).toBe(true);
      server!.closeAllConnections();
      await new Promise<void>((res) => server!.close(() => res()));
      server = null;
    }
  });

  it('a model silent before its first word, or stalling mid-answer: cut at its bound, said as such', async () => {
    const silent = await fake((_q, res) => res.writeHead(200, { 'content-type': 'text/event-stream' })); // headers, then nothing
    const t0 = Date.now();
    const r1 = await collect({ url: silent, name: 'm', key: KEY, timeouts: { firstTokenMs: 200 } });
    expect(r1.error?.message).toBe('the model sent no answer within 0.2 s');
    expect(Date.now() - t0).toBeLessThan(5_000);
    server!.closeAllConnections();
    await new Promise<void>((res) => server!.close(() => res()));
    const stalls = await fake((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"content":"Half an"}}]}\n\n'); // then nothing
    });
    const r2 = await collect({ url: stalls, name: 'm', key: KEY, timeouts: { idleMs: 200 } });
    expect(r2).toMatchObject({ text: 'Half an', error: { message: 'the model stopped answering for 0.2 s', beforeAnswer: false } });
  });

  it('a model host that echoes the key (or any service key), whole or in pieces: the reader never sees it', async () => {
    const url = await fake((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const echo = `proxy saw ${req.headers.authorization} and svc_dsc_0123456789abcdef here`;
      for (let i = 0; i < echo.length; i += 3) res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: echo.slice(i, i + 3) } }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
    const r = await collect({ url, name: 'm', key: KEY });
    expect(r.text).toBe('proxy saw Bearer [REDACTED] and svc_dsc_[REDACTED] here');
  });

  it('a model host that echoes the key in what it is refused for (its content type, a chunk), in any case: the refusal never carries it', async () => {
    const key = 'sk-MiXeD-Case-Secret-42';
    const url = await fake((req, res) => {
      const bearer = String(req.headers.authorization).slice('Bearer '.length);
      if (req.url!.includes('type')) res.writeHead(200, { 'content-type': `x/${bearer} svc_dsc_0123456789abcdef` }).end();
      else res.writeHead(200, SSE).end(`data: <html>${bearer}</html>\n\n`);
    });
    for (const path of ['type/v1', 'chunk/v1']) {
      const r = await collect({ url: url.replace(/v1$/, path), name: 'm', key });
      const said = `${r.error!.message} ${r.error!.detail}`;
      expect(said.toLowerCase()).not.toContain(key.toLowerCase());
      expect(said).not.toContain('svc_dsc_0123456789abcdef');
      expect(said).toContain('[REDACTED]');
    }
  });

  it('a stream of one endless line, or more than its byte bound: ended in words, the server not held', async () => {
    const url = await fake((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const blob = 'x'.repeat(64 * 1024);
      let sent = 0;
      const t = setInterval(() => {
        if (sent++ < 100) res.write(sent === 1 ? `data: ${blob}` : blob);
      }, 1);
      res.on('close', () => clearInterval(t));
    });
    const r = await collect({ url, name: 'm', key: KEY });
    expect(r.error?.message).toBe('the model sent an event longer than 1048576 bytes');
  });

  it('a model that sends its headers at once and thinks longer than a silence allows: its first word bound applies', async () => {
    const url = await fake((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      setTimeout(() => res.end('data: {"choices":[{"delta":{"content":"late but fine"}}]}\n\ndata: [DONE]\n\n'), 300);
    });
    const r = await collect({ url, name: 'm', key: KEY, timeouts: { firstTokenMs: 2_000, idleMs: 100 } });
    expect(r).toEqual({ text: 'late but fine', error: null });
  });

  it('a model that streams forever is cut at maxAnswerChars, and the call ends', async () => {
    const url = await fake((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const t = setInterval(() => res.write('data: {"choices":[{"delta":{"content":"la "}}]}\n\n'), 1);
      res.on('close', () => clearInterval(t));
    });
    const r = await collect({ url, name: 'm', key: KEY, maxAnswerChars: 300 });
    expect(r.error).toBeNull();
    expect(r.text.length).toBe(300);
  });

  it('the reader going away (abort) ends the call with no error', async () => {
    const url = await fake((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"content":"one "}}]}\n\n');
    });
    const gone = new AbortController();
    const pieces: string[] = [];
    for await (const p of streamChat({ url, name: 'm', key: null }, ask, gone.signal)) {
      pieces.push(p);
      gone.abort();
    }
    expect(pieces).toEqual(['one ']);
  });
});
