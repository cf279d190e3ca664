import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_FAULTS, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { FAST, tinySite } from './site.js';

let emu: RunningEmulator;
let site: ReturnType<typeof tinySite>;
beforeAll(async () => {
  site = tinySite();
  emu = await startEmulator({ sites: { 'docs.example.com': { dir: site.dir } }, timings: FAST, rateLimits: { perOrgPerHour: 4 }, streamDelayMs: 10 });
});
afterAll(async () => {
  await emu.close();
  site.cleanup();
});
beforeEach(() => {
  emu.setFaults({ ...DEFAULT_FAULTS });
});

async function call(method: 'GET' | 'POST', path: string, o: { key?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  const res = await request(emu.url + path, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> };
}
const ask = (text: string, extra: Record<string, unknown> = {}) => ({
  fp: 'fp',
  messages: [{ id: 'm', role: 'user', parts: [{ type: 'text', text }] }],
  ...extra,
});

describe('export API', () => {
  it('admin auth: missing → 401, assistant key → 403, unknown → 401; every answer is {error}', async () => {
    const missing = await call('POST', '/v1/static-export/jobs', { body: { domain: 'docs.example.com' } });
    expect(missing.status).toBe(401);
    expect(missing.json().error).toBeTypeOf('string');
    expect((await call('POST', '/v1/static-export/jobs', { key: emu.keys.assistant, body: { domain: 'docs.example.com' } })).status).toBe(403);
    expect((await call('GET', '/v1/static-export/jobs/x', { key: 'svc_other0123456789' })).status).toBe(401);
  });

  it('unknown domain → 404, invalid body → 400 naming the field, unknown route → 404 {error}', async () => {
    const k = emu.keys.admin;
    expect((await call('POST', '/v1/static-export/jobs', { key: k, body: { domain: 'nope.example.com' } })).json().error).toBe(
      'domain not found: nope.example.com',
    );
    const bad = await call('POST', '/v1/static-export/jobs', { key: k, body: { domian: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.json().error).toMatch(/domain/);
    expect((await call('GET', '/v1/nothing', { key: k })).status).toBe(404);
  });

  it('prototype keys are not domains: __proto__ and constructor are unknown', async () => {
    for (const domain of ['__proto__', 'constructor', 'toString']) {
      expect((await call('POST', '/v1/static-export/jobs', { key: emu.keys.admin, body: { domain } })).status).toBe(404);
    }
  });

  it('faults endpoint: validated merge, and the state endpoint never shows a key', async () => {
    const bad = await call('POST', '/_emulator/faults', { body: { linkLifetimeSeconds: -1, nonsense: 1 } });
    expect(bad.status).toBe(400);
    const ok = await call('POST', '/_emulator/faults', { body: { burst500: { count: 1 }, storage: 'gcs' } });
    expect(ok.json().faults).toMatchObject({ burst500: { count: 1 }, storage: 'gcs', linkLifetimeSeconds: 900 });
    expect((await call('GET', '/v1/static-export/jobs/x', { key: emu.keys.admin })).status).toBe(500);
    expect((await call('GET', '/v1/static-export/jobs/x', { key: emu.keys.admin })).status).toBe(404);
    await call('POST', '/_emulator/faults', { body: { storage: null } });
    const state = await call('GET', '/_emulator/state');
    expect(state.json().faults).toMatchObject({ storage: 's3' });
    expect(state.text).not.toContain(emu.keys.admin);
    expect(state.text).not.toContain(emu.keys.assistant);
  });

  it('agent jobs: created through the control endpoint, read with the admin key', async () => {
    const created = (await call('POST', '/_emulator/agent-jobs', { body: { projectId: 'p1', outcome: 'failed' } })).json() as { id: string };
    const r = await call('GET', `/v2/agent/p1/job/${created.id}`, { key: emu.keys.admin });
    expect(r.json()).toMatchObject({ id: created.id, status: 'active', prLink: null, archivedAt: null, source: { ref: 'main' } });
    expect((await call('GET', `/v2/agent/p2/job/${created.id}`, { key: emu.keys.admin })).status).toBe(404);
    expect((await call('GET', `/v2/agent/p1/job/${created.id}`, { key: emu.keys.assistant })).status).toBe(403);
  });
});

describe('assistant and search', () => {
  it('streams an AI SDK v5 UI message stream: headers, chunk order, [DONE] last', async () => {
    const r = await call('POST', '/discovery/v2/assistant/docs.example.com/message', { key: emu.keys.assistant, body: ask('rotate tokens') });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(r.headers['x-vercel-ai-ui-message-stream']).toBe('v1');
    const events = r.text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { type: string; url?: string });
    expect(chunks.map((c) => c.type).filter((t) => t !== 'text-delta')).toEqual([
      'start',
      'start-step',
      'source-url',
      'text-start',
      'text-end',
      'finish-step',
      'finish',
    ]);
    expect(chunks.find((c) => c.type === 'source-url')!.url).toBe('https://docs.example.com/guide/tokens');
  });

  it('an invalid request gets 400 listing every problem', async () => {
    const body = {
      messages: [{ id: 'm', role: 'user', parts: [{ type: 'video', text: 'x' }] }],
      currentPath: 'x'.repeat(201),
      context: [{ type: 'file', value: 1 }],
    };
    const r = await call('POST', '/discovery/v2/assistant/docs.example.com/message', { key: emu.keys.assistant, body });
    expect(r.status).toBe(400);
    const paths = (r.json().problems as { path: string }[]).map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['fp', 'messages.0.parts.0.type', 'currentPath', 'context.0.type', 'context.0.value']));
  });

  it('search answers from the fixture pages (GET and POST)', async () => {
    const g = (await call('GET', '/discovery/v2/search/docs.example.com?q=install', { key: emu.keys.assistant })).json() as { results: { path: string }[] };
    expect(g.results[0]!.path).toBe('guide/install.html');
    const p = (await call('POST', '/discovery/v2/search/docs.example.com', { key: emu.keys.assistant, body: { query: 'tokens' } })).json() as {
      results: { path: string }[];
    };
    expect(p.results[0]!.path).toBe('guide/tokens.html');
    expect((await call('GET', '/discovery/v2/search/docs.example.com?q=x', { key: emu.keys.admin })).status).toBe(403);
  });

  it('rate limit per organisation: over the limit → 429 with Retry-After', async () => {
    let last = await call('GET', '/discovery/v2/search/docs.example.com?q=a', { key: emu.keys.assistant });
    for (let i = 0; i < 6 && last.status !== 429; i++) last = await call('GET', '/discovery/v2/search/docs.example.com?q=a', { key: emu.keys.assistant });
    expect(last.status).toBe(429);
    const retryAfter = Number(last.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600);
  });
});
