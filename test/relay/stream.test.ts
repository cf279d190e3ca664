import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import { assistantBody, fixtureStoreForFile, startAirlock } from './helpers.js';
import { fakeUpstream } from './fake-upstream.js';
import { cleanupAfterEach } from '../helpers/scope.js';
import { until } from '../helpers/wait.js';

const fx = fixtureStoreForFile();
const cleanups = cleanupAfterEach();

interface Timed {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  chunks: Array<{ at: number; text: string }>;
  end: number;
  start: number;
}

/** POST with node:http and time-stamp every chunk as it arrives (fetch would hide the chunking). */
function timedPost(url: string, body: unknown): Promise<Timed> {
  const u = new URL(url);
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const t: Timed = { status: res.statusCode ?? 0, headers: res.headers, chunks: [], end: 0, start };
      res.on('data', (c: Buffer) => t.chunks.push({ at: Date.now(), text: c.toString('utf8') }));
      res.on('end', () => resolve({ ...t, end: Date.now() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('relay streaming', () => {
  it("passes the emulator's SSE answer through unbuffered: first chunk long before the last", async () => {
    const emu = await startEmulator({ streamDelayMs: 15 });
    cleanups.push(() => emu.close());
    const air = await startAirlock(fx.store, { deployment: 'client-hosted', enable: ['assistant'] }, { upstreamUrl: emu.url, key: emu.keys.assistant });
    cleanups.push(() => air.close());
    const t = await timedPost(`${air.origin}/discovery/v2/assistant/docs.example.com/message`, assistantBody());
    expect(t.status).toBe(200);
    expect(t.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(t.headers['x-vercel-ai-ui-message-stream']).toBe('v1');
    expect(t.headers['x-accel-buffering']).toBe('no');
    expect(t.headers['cache-control']).toMatch(/no-(cache|store)/);
    const text = t.chunks.map((c) => c.text).join('');
    expect(text).toContain('"type":"text-delta"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const events = text.split('\n\n').filter((e) => e.startsWith('data: ')).length;
    const ttfb = t.chunks[0]!.at - t.start;
    const total = t.end - t.start;
    // The emulator sleeps 15 ms between its events: a buffering relay would deliver everything at once.
    expect(events).toBeGreaterThan(5);
    expect(t.chunks.length).toBeGreaterThan(3);
    expect(total - ttfb).toBeGreaterThanOrEqual((events - 2) * 15 * 0.8);
    console.log(`relay stream: ${events} events, ${t.chunks.length} chunks, TTFB ${ttfb} ms, total ${total} ms`);
  });

  it('client disconnect aborts the upstream call', async () => {
    let timer: NodeJS.Timeout | undefined;
    const up = await fakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      // an endless answer: only an abort from the relay ends it
      timer = setInterval(() => res.write(`data: {"type":"text-delta","id":"t","delta":"w${n++} "}\n\n`), 30);
      res.on('close', () => clearInterval(timer));
    });
    cleanups.push(async () => {
      clearInterval(timer);
      await up.close();
    });
    const air = await startAirlock(fx.store, { deployment: 'cloud' }, { upstreamUrl: up.url, key: 'svc_dsc_x123' });
    cleanups.push(() => air.close());
    const u = new URL(`${air.origin}/discovery/v2/assistant/docs.example.com/message`);
    const gotFirst = await new Promise<number>((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.once('data', () => {
          const at = Date.now();
          req.destroy(); // the reader closes the tab
          resolve(at);
        });
      });
      req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
      req.end(JSON.stringify(assistantBody()));
    });
    await until(() => up.seen[0]?.closedAt != null, { timeoutMs: 3000, intervalMs: 20 }).catch(() => undefined);
    const s = up.seen[0]!;
    expect(s.closedAt).not.toBeNull();
    expect(s.aborted).toBe(true);
    expect(s.closedAt! - gotFirst).toBeLessThan(1500);
  });

  it('an upstream that dies mid-stream ends the SSE answer with an error chunk', async () => {
    const up = await fakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"type":"text-delta","id":"t","delta":"partial"}\n\n');
      setTimeout(() => res.destroy(), 50);
    });
    cleanups.push(up.close);
    const air = await startAirlock(fx.store, { deployment: 'cloud' }, { upstreamUrl: up.url, key: 'svc_dsc_x123' });
    cleanups.push(() => air.close());
    const t = await timedPost(`${air.origin}/discovery/v2/assistant/docs.example.com/message`, assistantBody());
    const text = t.chunks.map((c) => c.text).join('');
    expect(text).toContain('partial');
    expect(text).toContain('"type":"error"');
  });

  it('search is relayed too (POST and GET) against the emulator', async () => {
    const emu = await startEmulator();
    cleanups.push(() => emu.close());
    const air = await startAirlock(fx.store, { deployment: 'client-hosted', enable: ['search'] }, { upstreamUrl: emu.url, key: emu.keys.assistant });
    cleanups.push(() => air.close());
    const post = await fetch(`${air.origin}/discovery/v2/search/docs.example.com`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'access token', pageSize: 5 }),
    });
    expect(post.status).toBe(200);
    const hits = (await post.json()) as { results: Array<{ path: string }> };
    expect(hits.results.length).toBeGreaterThan(0);
    const get = await fetch(`${air.origin}/discovery/v2/search/docs.example.com?q=webhooks`);
    expect(get.status).toBe(200);
    expect(((await get.json()) as { query: string }).query).toBe('webhooks');
    // assistant is off in this configuration: fail-fast 404, the emulator not called for it
    const off = await fetch(`${air.origin}/discovery/v2/assistant/docs.example.com/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(off.status).toBe(404);
    expect(emu.state.apiRequests.map((r) => r.path)).toEqual(['/discovery/v2/search/docs.example.com', '/discovery/v2/search/docs.example.com']);
  });
});
