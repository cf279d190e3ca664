import { describe, expect, it } from 'vitest';
import { assistantBody, fixtureStoreForFile, postJson, startAirlock, type RelaySettings, type Running } from './helpers.js';
import { deadPort, endlessAnswer, fakeUpstream } from './fake-upstream.js';
import { cleanupAfterEach } from '../helpers/scope.js';

const KEY = 'svc_dsc_relaytest0123456789';
const fx = fixtureStoreForFile();
const cleanups = cleanupAfterEach();

// Generous timeouts, so a loaded machine cannot turn an upstream's answer into a 504; the test of
// a slow upstream asks for a short headers timeout itself.
async function relayTo(
  upstreamUrl: string,
  timeouts: RelaySettings['timeouts'] = { connectMs: 5000, headersMs: 5000, idleMs: 5000 },
  maxAnswerBytes?: number,
): Promise<Running> {
  const air = await startAirlock(
    fx.store,
    { deployment: 'cloud' },
    { upstreamUrl, key: KEY, timeouts, ...(maxAnswerBytes === undefined ? {} : { maxAnswerBytes }) },
  );
  cleanups.push(() => air.close());
  return air;
}
const msg = (air: Running) => `${air.origin}/discovery/v2/assistant/docs.example.com/message`;

describe('relay upstream failures', () => {
  it('slow upstream (no headers) is 504 JSON within the bounded timeout', async () => {
    const up = await fakeUpstream(() => {
      /* never answers */
    });
    cleanups.push(up.close);
    const air = await relayTo(up.url, { connectMs: 5000, headersMs: 400, idleMs: 5000 });
    const t0 = Date.now();
    const res = await postJson(msg(air), assistantBody());
    const ms = Date.now() - t0;
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: string }).error).toMatch(/did not answer in time/);
    expect(up.seen).toHaveLength(1);
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(ms).toBeLessThan(3000);
  });

  it('dead upstream (connection refused) is 502 JSON', async () => {
    const air = await relayTo(`http://127.0.0.1:${await deadPort()}`);
    const res = await postJson(msg(air), assistantBody());
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: string }).error).toMatch(/unreachable \(connection refused\)$/);
  });

  it('upstream 500 is 502; upstream 401 is 502 and the key never reaches the browser', async () => {
    let status = 500;
    const up = await fakeUpstream((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `bad key ${KEY}` }));
    });
    cleanups.push(up.close);
    const air = await relayTo(up.url);
    const r1 = await postJson(msg(air), assistantBody());
    expect(r1.status).toBe(502);
    status = 401;
    const r2 = await postJson(msg(air), assistantBody());
    expect(r2.status).toBe(502);
    const text = await r2.text();
    expect(text).not.toContain(KEY);
    expect(text).toMatch(/refused this server's key/);
  });

  it('upstream 429 passes through as 429 with its Retry-After', async () => {
    const up = await fakeUpstream((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '17' });
      res.end('{"error":"rate limit exceeded"}');
    });
    cleanups.push(up.close);
    const res = await postJson(msg(await relayTo(up.url)), assistantBody());
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('17');
  });

  it("credential leak: the reader's cookies and Authorization are not forwarded; the relay's key is", async () => {
    const up = await fakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: [DONE]\n\n');
    });
    cleanups.push(up.close);
    const air = await relayTo(up.url);
    const res = await postJson(msg(air), assistantBody({ currentPath: '/' + 'p'.repeat(199) }), {
      cookie: 'session=reader-secret',
      authorization: 'Bearer reader-token',
      'x-forwarded-for': '10.9.9.9',
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('data: [DONE]\n\n');
    const s = up.seen[0]!;
    expect(s.url).toBe('/discovery/v2/assistant/docs.example.com/message');
    expect(s.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(s.headers.cookie).toBeUndefined();
    expect(s.headers['x-forwarded-for']).toBeUndefined();
    expect(JSON.stringify(s.headers)).not.toContain('reader-');
    // the service gets the validated body, re-serialised (a 200-character currentPath is allowed)
    const sent = JSON.parse(s.body) as { currentPath: string; retrievalPageSize: number };
    expect(sent.currentPath).toHaveLength(200);
    expect(sent.retrievalPageSize).toBe(5);
  });

  it('parser differential: a body naming a key twice is refused (400 naming the key) and never reaches the service', async () => {
    const up = await fakeUpstream((_req, res) => res.end('data: [DONE]\n\n'));
    cleanups.push(up.close);
    const air = await relayTo(up.url);
    const raw = JSON.stringify(assistantBody({ currentPath: '/ok' })).replace('"currentPath":"/ok"', `"currentPath":"${'x'.repeat(500)}","currentPath":"/ok"`);
    const res = await postJson(msg(air), raw);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain('names the key "currentPath" twice');
    expect(up.seen).toEqual([]);
  });

  it('XSS through the upstream: an HTML answer (with a key in it) is never relayed: 502 in words, JSON, nosniff', async () => {
    const up = await fakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<script>alert(document.cookie)</script>${KEY}`);
    });
    cleanups.push(up.close);
    const air = await relayTo(up.url);
    for (const res of [await postJson(msg(air), assistantBody()), await fetch(`${air.origin}/discovery/v2/search/docs.example.com?q=x`)]) {
      expect(res.status).toBe(502);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const text = await res.text();
      expect(text).not.toContain('<script>');
      expect(text).not.toContain(KEY);
      expect((JSON.parse(text) as { error: string }).error).toMatch(
        /^the (assistant|search) service answered with type "text\/html", not (an event stream|JSON)$/,
      );
    }
  });

  it('a compressed answer (a gzip bomb labelled JSON or an event stream) is never passed on as if it were plain: 502 in words; identity is asked for', async () => {
    const { gzipSync } = await import('node:zlib');
    const bomb = gzipSync(Buffer.alloc(64 << 20));
    const asked: (string | undefined)[] = [];
    const up = await fakeUpstream((req, res) => {
      asked.push(req.headers['accept-encoding'] as string | undefined);
      res.writeHead(200, { 'content-type': req.url?.includes('assistant') ? 'text/event-stream' : 'application/json', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    cleanups.push(up.close);
    const air = await relayTo(up.url);
    for (const res of [await postJson(msg(air), assistantBody()), await fetch(`${air.origin}/discovery/v2/search/docs.example.com?q=x`)]) {
      expect(res.status).toBe(502);
      expect(((await res.json()) as { error: string }).error).toMatch(/service sent a compressed answer \("gzip"\), which the relay does not pass on$/);
    }
    expect(asked).toEqual(['identity', 'identity']);
  });

  it('a search answer that is not JSON is 502; a key the service echoes in a JSON answer is redacted', async () => {
    let body = 'not json at all';
    const up = await fakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    cleanups.push(up.close);
    const air = await relayTo(up.url);
    const bad = await fetch(`${air.origin}/discovery/v2/search/docs.example.com?q=x`);
    expect(bad.status).toBe(502);
    expect(await bad.json()).toEqual({ error: 'the search service sent an answer that is not JSON' });
    body = JSON.stringify({ results: [{ title: `echo ${KEY}` }] });
    const ok = await fetch(`${air.origin}/discovery/v2/search/docs.example.com?q=x`);
    expect(ok.status).toBe(200);
    const text = await ok.text();
    expect(text).not.toContain(KEY);
    expect(JSON.parse(text)).toEqual({ results: [{ title: 'echo svc_dsc_[REDACTED]' }] });
  });

  it('an endless search answer is cut at the answer bound: 502 in words, not gigabytes relayed to the reader', async () => {
    const up = await fakeUpstream((_req, res) => endlessAnswer(res, 'application/json', 'x'.repeat(64 * 1024), '{"results":["'));
    cleanups.push(up.close);
    const air = await relayTo(up.url, undefined, 1 << 20);
    const res = await fetch(`${air.origin}/discovery/v2/search/docs.example.com?q=x`);
    const text = await res.text();
    expect(res.status).toBe(502);
    expect(text.length).toBeLessThan(4096);
    expect(JSON.parse(text)).toEqual({ error: 'the search service sent an answer larger than 1 MiB' });
  });

  it('an endless assistant stream is cut at the answer bound with an error part', async () => {
    const up = await fakeUpstream((_req, res) =>
      endlessAnswer(res, 'text/event-stream', `data: ${JSON.stringify({ type: 'text-delta', id: 't', delta: 'y'.repeat(60 * 1024) })}\n\n`),
    );
    cleanups.push(up.close);
    const air = await relayTo(up.url, undefined, 1 << 20);
    const res = await postJson(msg(air), assistantBody());
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.length).toBeLessThan((1 << 20) + 64 * 1024 + 4096);
    expect(
      text.endsWith(`data: ${JSON.stringify({ type: 'error', errorText: 'the assistant service sent an answer larger than 1 MiB; it was cut there' })}\n\n`),
    ).toBe(true);
  });

  it('a search answer that trickles past its deadline is 504 in words', async () => {
    const timers: NodeJS.Timeout[] = [];
    const up = await fakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"results":[');
      timers.push(setInterval(() => res.write(' '), 50));
    });
    cleanups.push(async () => {
      for (const t of timers) clearInterval(t);
      await up.close();
    });
    const air = await relayTo(up.url, { connectMs: 5000, headersMs: 5000, idleMs: 5000, answerMs: 500 });
    const t0 = Date.now();
    const res = await fetch(`${air.origin}/discovery/v2/search/docs.example.com?q=x`);
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ error: 'the search service did not finish its answer within 0.5 s' });
    expect(Date.now() - t0).toBeLessThan(4000);
  });
});
