import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { assistantBody, fixtureStore, postJson, startAirlock, type Running } from './helpers.js';

let fx: Awaited<ReturnType<typeof fixtureStore>>;
let emu: RunningEmulator;
let air: Running;
let msgUrl: string;

beforeAll(async () => {
  fx = await fixtureStore();
  emu = await startEmulator();
  air = await startAirlock(fx.store, { deployment: 'client-hosted', enable: ['assistant', 'search'] }, { upstreamUrl: emu.url, key: emu.keys.assistant });
  msgUrl = `${air.origin}/discovery/v2/assistant/docs.example.com/message`;
});
afterAll(async () => {
  await air?.close();
  await emu?.close();
  await fx?.cleanup();
});

/** Every case here must be refused by the relay itself: the service never hears of it. */
const upstreamCalls = () => emu.state.apiRequests.filter((r) => r.path.startsWith('/discovery/')).length;

async function expectRefused(res: Response, status: number): Promise<{ error: string; problems?: Array<{ path: string; message: string }> }> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as { error: string; problems?: Array<{ path: string; message: string }> };
  expect(typeof body.error).toBe('string');
  expect(upstreamCalls()).toBe(0);
  return body;
}

describe('relay bad input: refused before any upstream call', () => {
  it('invalid JSON is 400 naming the parse failure', async () => {
    const body = await expectRefused(await postJson(msgUrl, '{"fp": "x", "messages": ['), 400);
    expect(body.error).toMatch(/not valid JSON/);
  });

  it('a message part of an unknown type is 400 with the path of the part', async () => {
    const bad = assistantBody({ messages: [{ id: 'm1', role: 'user', parts: [{ type: 'image', url: 'x' }] }] });
    const body = await expectRefused(await postJson(msgUrl, bad), 400);
    expect(body.problems!.map((p) => p.path)).toContain('messages.0.parts.0.type');
  });

  it('a text part whose text is not a string is 400', async () => {
    const bad = assistantBody({ messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 42 }] }] });
    const body = await expectRefused(await postJson(msgUrl, bad), 400);
    expect(body.problems!.map((p) => p.path)).toContain('messages.0.parts.0.text');
  });

  it('a 201-character currentPath is 400; 200 characters pass the schema', async () => {
    const body = await expectRefused(await postJson(msgUrl, assistantBody({ currentPath: '/' + 'a'.repeat(200) })), 400);
    expect(body.problems).toEqual([expect.objectContaining({ path: 'currentPath' })]);
  });

  it('a retrievalPageSize too large for a double (1e400, which JSON.parse reads as Infinity) is 400 in words', async () => {
    const text = JSON.stringify(assistantBody({ retrievalPageSize: 5 })).replace('"retrievalPageSize":5', '"retrievalPageSize":1e400');
    const body = await expectRefused(await postJson(msgUrl, text), 400);
    expect(body.problems).toEqual([{ path: 'retrievalPageSize', message: 'must be a finite number' }]);
  });

  it('a context entry whose type is not code|textSelection is 400', async () => {
    const body = await expectRefused(await postJson(msgUrl, assistantBody({ context: [{ type: 'screenshot', value: 'x' }] })), 400);
    expect(body.problems!.map((p) => p.path)).toContain('context.0.type');
  });

  it('every problem is listed, not just the first', async () => {
    const bad = { fp: '', messages: [], currentPath: 'x'.repeat(300), context: [{ type: 'nope', value: 1 }] };
    const body = await expectRefused(await postJson(msgUrl, bad), 400);
    const paths = body.problems!.map((p) => p.path);
    for (const p of ['fp', 'messages', 'currentPath', 'context.0.type', 'context.0.value']) expect(paths).toContain(p);
    expect(body.error).toContain('currentPath');
  });

  it('memory exhaustion: a 10 MB body with Content-Length is 413', async () => {
    const big = JSON.stringify(assistantBody({ currentPath: 'x', filter: { version: 'a'.repeat(10 * 1024 * 1024) } }));
    await expectRefused(await postJson(msgUrl, big), 413);
  });

  it('memory exhaustion: a 10 MB chunked body (no Content-Length) is cut off at the cap with 413', async () => {
    const u = new URL(msgUrl);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e)));
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      const pump = () => {
        while (sent < 10 * 1024 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(status).toBe(413);
    expect(upstreamCalls()).toBe(0);
  });

  it('CSRF: a cross-site text/plain form post is refused with 415 (no preflight-free way to spend the quota)', async () => {
    const res = await fetch(msgUrl, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(assistantBody()) });
    await expectRefused(res, 415);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('confused deputy: asking about another domain of the organisation is 404', async () => {
    const body = await expectRefused(await postJson(`${air.origin}/discovery/v2/assistant/other.example.com/message`, assistantBody()), 404);
    expect(body.error).toContain('docs.example.com');
  });

  it('search: a missing query, unknown GET parameters and oversized queries are 400', async () => {
    await expectRefused(await postJson(`${air.origin}/discovery/v2/search/docs.example.com`, { pageSize: 3 }), 400);
    await expectRefused(await fetch(`${air.origin}/discovery/v2/search/docs.example.com?q=x&debug=1`), 400);
    await expectRefused(await fetch(`${air.origin}/discovery/v2/search/docs.example.com?q=${'a'.repeat(1001)}`), 400);
  });
});
