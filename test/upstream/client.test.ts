import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AirlockError, AuthError, EXIT, UpstreamError } from '../../src/errors.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { ServiceClient, finishThreadId, type RetryInfo, type UiMessageChunk } from '../../src/upstream/index.js';
import { FAST, tinySite } from '../emulator/site.js';
import { until } from '../helpers/wait.js';

const DOMAIN = 'docs.example.com';
const FORBIDDEN = 'svc_forbidden0123456789abcdef';
let emu: RunningEmulator;
let site: ReturnType<typeof tinySite>;
/** Everything a test printed or threw, to prove no key ever shows. */
const seen: string[] = [];
/**
 * The emulator's clock, moved only by the tests. Job states are a function of time (40 ms queued,
 * 160 ms running, 150 ms active): on the wall clock a request delayed by a loaded machine could land
 * after the state it was meant to see, so each test reads a state, then advances the clock itself.
 */
let clock = Date.now();

beforeAll(async () => {
  site = tinySite();
  emu = await startEmulator({
    sites: { [DOMAIN]: { dir: site.dir } },
    timings: FAST,
    forbiddenKeys: [FORBIDDEN],
    agentJobMs: 150,
    streamDelayMs: 5,
    now: () => clock,
  });
});
afterAll(async () => {
  const all = seen.join('\n');
  for (const k of [emu.keys.admin, emu.keys.assistant, FORBIDDEN]) expect(all).not.toContain(k);
  await emu.close();
  site.cleanup();
});
beforeEach(() => {
  emu.setFaults({ burst429: null, burst500: null, failingDomains: [] });
  emu.state.apiRequests.length = 0;
});

function client(o: Partial<ConstructorParameters<typeof ServiceClient>[0]> = {}) {
  return new ServiceClient({ baseUrl: emu.url, adminKey: emu.keys.admin, assistantKey: emu.keys.assistant, retry: { retries: 3, baseMs: 5, maxMs: 20 }, ...o });
}
async function failure(p: Promise<unknown>): Promise<AirlockError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AirlockError);
  seen.push(JSON.stringify((err as AirlockError).toJSON()), (err as Error).message);
  return err as AirlockError;
}
async function completedJob(c: ServiceClient, domain = DOMAIN) {
  const job = await c.startExport(domain);
  for (let i = 0; i < 100; i++) {
    const j = await c.getExport(job.jobId);
    if (j.status === 'completed' || j.status === 'failed') return j;
    clock += 20;
  }
  throw new Error('job did not finish');
}

describe('ServiceClient against the emulator', () => {
  it('export lifecycle: 202 with the whole job, running with progress, completed, then a bundle link', async () => {
    const c = client();
    const job = await c.startExport(DOMAIN);
    expect(job).toMatchObject({ status: 'queued', progress: 0, pageCount: 0 });
    expect(job.jobId).toMatch(/^se_[0-9a-f]{16}$/);
    expect(job.createdAt).toBeTruthy();
    const statuses = new Set<string>();
    let last = job;
    for (let i = 0; i < 100 && last.status !== 'completed'; i++) {
      last = await c.getExport(job.jobId);
      statuses.add(last.status);
      if (last.status === 'running') expect(last.progress).toBeGreaterThanOrEqual(0);
      clock += 10;
    }
    // Polled every 10 ms of the emulator's time: the 160 ms run is seen whatever the machine's speed.
    expect(statuses.has('running')).toBe(true);
    expect(last).toMatchObject({ status: 'completed', progress: 100, pageCount: 3 });
    const link = await c.getBundle(job.jobId);
    expect(link.jobId).toBe(job.jobId);
    expect(link.sizeBytes).toBeGreaterThan(0);
    expect(new URL(link.bundleUrl).searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    const again = await c.getBundle(job.jobId);
    expect(again.bundleUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_objects\//);
  });

  it('a failing domain: status failed with the service error text', async () => {
    emu.setFaults({ failingDomains: [DOMAIN] });
    const j = await completedJob(client());
    expect(j.status).toBe('failed');
    expect(j.error).toMatch(/export failed/);
  });

  it('wrong key type: an assistant key for an admin endpoint is exit 5 before any request', async () => {
    const c = client({ adminKey: emu.keys.assistant });
    for (const p of [c.startExport(DOMAIN), c.getExport('job_x'), c.getBundle('job_x'), c.getAgentJob('p', 'i')]) {
      const err = await failure(p);
      expect(err).toBeInstanceOf(AuthError);
      expect(err.exitCode).toBe(EXIT.AUTH);
      expect(err.code).toBe('AIRLOCK_WRONG_KEY_TYPE');
    }
    const gen = client({ assistantKey: emu.keys.admin }).assistantMessage(DOMAIN, { fp: 'f', messages: [] });
    expect((await failure(gen.next())).code).toBe('AIRLOCK_WRONG_KEY_TYPE');
    expect(emu.state.apiRequests).toEqual([]);
  });

  it('missing key: exit 5 before any request', async () => {
    const err = await failure(client({ adminKey: undefined }).startExport(DOMAIN));
    expect(err).toMatchObject({ code: 'AIRLOCK_AUTH_MISSING', exitCode: 5 });
    expect(emu.state.apiRequests).toEqual([]);
  });

  it('401 for an unknown key and 403 for a key without permission are AuthError (exit 5)', async () => {
    const e401 = await failure(client({ adminKey: 'svc_unknownkey0123456789' }).startExport(DOMAIN));
    expect(e401).toMatchObject({ code: 'AIRLOCK_UNAUTHORIZED', exitCode: 5 });
    expect(e401.message).toContain('invalid API key');
    const e403 = await failure(client({ adminKey: FORBIDDEN }).getExport('job_x'));
    expect(e403).toMatchObject({ code: 'AIRLOCK_FORBIDDEN', exitCode: 5 });
    expect(emu.state.apiRequests.map((r) => r.status)).toEqual([401, 403]);
  });

  it('404 for an unknown job carries the service {error} text', async () => {
    const err = await failure(client().getExport('job_doesnotexist'));
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.code).toBe('AIRLOCK_NOT_FOUND');
    expect(err.message).toContain('job not found: job_doesnotexist');
  });

  it('409 on an early bundle request is AIRLOCK_NOT_READY', async () => {
    const c = client();
    const job = await c.startExport(DOMAIN);
    // Asked in the last millisecond of the run (the clock stands still meanwhile): not ready yet.
    clock += FAST.queuedMs + FAST.runningMs - 1;
    const err = await failure(c.getBundle(job.jobId));
    expect(err).toMatchObject({ code: 'AIRLOCK_NOT_READY', status: 409 });
  });

  it('429 with Retry-After: 1 is waited out (measured), then the call succeeds', async () => {
    emu.setFaults({ burst429: { count: 1, retryAfterSeconds: 1 } });
    const retries: RetryInfo[] = [];
    const t0 = performance.now();
    const job = await client({ onRetry: (i) => retries.push(i) }).startExport(DOMAIN);
    const elapsed = performance.now() - t0;
    expect(job.jobId).toMatch(/^se_[0-9a-f]{16}$/);
    expect(retries).toEqual([expect.objectContaining({ attempt: 1, delayMs: 1000, reason: 'HTTP 429' })]);
    expect(elapsed).toBeGreaterThanOrEqual(990);
    expect(elapsed).toBeLessThan(3000);
    seen.push(JSON.stringify(retries));
  });

  it('a burst of 500s then success; a longer burst than the retry budget fails with the status', async () => {
    emu.setFaults({ burst500: { count: 3 } });
    const retries: RetryInfo[] = [];
    const job = await client({ onRetry: (i) => retries.push(i) }).startExport(DOMAIN);
    expect(job.status).toBe('queued');
    expect(retries.map((r) => r.reason)).toEqual(['HTTP 500', 'HTTP 500', 'HTTP 500']);
    emu.setFaults({ burst500: { count: 10 } });
    const err = await failure(client({ retry: { retries: 2, baseMs: 1, maxMs: 2 } }).startExport(DOMAIN));
    expect(err).toMatchObject({ status: 500, code: 'AIRLOCK_UPSTREAM' });
    expect(emu.state.apiRequests.filter((r) => r.status === 500)).toHaveLength(6);
  });

  it('agent jobs: read one, and waitForAgentJob polls until it is completed', async () => {
    const created = emu.state.addAgentJob('proj1', 'completed', clock);
    const c = client();
    const active = await c.getAgentJob('proj1', created.id);
    expect(active).toMatchObject({ id: created.id, status: 'active' });
    expect(active.prLink).toBeUndefined(); // null on the wire: absent to the reader
    // The job stays active until the waiter has asked twice more; then its 150 ms pass at once.
    const polls = () => emu.state.apiRequests.filter((r) => r.path.endsWith(`/job/${created.id}`)).length;
    const waiting = c.waitForAgentJob('proj1', created.id, { intervalMs: 20, timeoutMs: 10_000 });
    await until(() => polls() >= 3, { timeoutMs: 10_000, intervalMs: 5 }).catch(() => undefined);
    const asked = polls();
    expect(asked).toBeGreaterThanOrEqual(3);
    clock += 150;
    const done = await waiting;
    expect(polls()).toBe(asked + 1); // it stopped asking once the job was completed
    expect(done).toMatchObject({ status: 'completed', source: { ref: 'main' } });
    expect(done.prLink).toMatch(/^https:\/\//);
    expect((await failure(c.getAgentJob('proj1', 'agj_nope'))).code).toBe('AIRLOCK_NOT_FOUND');
  });

  it('waitForAgentJob is bounded by its timeout', async () => {
    const created = emu.state.addAgentJob('proj2', 'completed', clock + 60_000);
    const err = await failure(client().waitForAgentJob('proj2', created.id, { intervalMs: 20, timeoutMs: 150 }));
    expect(err.code).toBe('AIRLOCK_TIMEOUT');
  });

  it('assistant: the stream arrives chunk by chunk, cites the matching page and ends with finish + threadId', async () => {
    const chunks: { c: UiMessageChunk; t: number }[] = [];
    const body = { fp: 'fp1', messages: [{ id: 'm1', role: 'user' as const, parts: [{ type: 'text' as const, text: 'How do I install gizmo?' }] }] };
    for await (const c of client().assistantMessage(DOMAIN, body)) chunks.push({ c, t: performance.now() });
    const types = chunks.map((x) => x.c.type);
    expect(types[0]).toBe('start');
    expect(types.at(-1)).toBe('finish');
    expect(finishThreadId(chunks.at(-1)!.c)).toMatch(/^thr_/);
    const sources = chunks.filter((x) => x.c.type === 'source-url').map((x) => (x.c as { url: string }).url);
    expect(sources[0]).toBe('https://docs.example.com/guide/install');
    const text = chunks
      .filter((x) => x.c.type === 'text-delta')
      .map((x) => (x.c as { delta: string }).delta)
      .join('');
    expect(text).toContain('npm install gizmo');
    expect(chunks.at(-1)!.t - chunks[0]!.t).toBeGreaterThan(20);
    const again: UiMessageChunk[] = [];
    for await (const c of client().assistantMessage(DOMAIN, { ...body, threadId: 'thr_given' })) again.push(c);
    expect(finishThreadId(again.at(-1)!)).toBe('thr_given');
  });
});

describe('ServiceClient against a broken server', () => {
  let server: Server;
  let url: string;
  let answer: (res: import('node:http').ServerResponse) => void;
  beforeAll(async () => {
    server = createServer((_req, res) => answer(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  // A generous timeout, so a loaded machine cannot turn a bad answer into a timeout; only the
  // headers-timeout test asks for a short one.
  const c = (timeoutMs = 5000) =>
    new ServiceClient({
      baseUrl: url,
      adminKey: 'svc_brokentest0123',
      assistantKey: 'svc_dsc_brokentest0123',
      retry: { retries: 1, baseMs: 1, maxMs: 2 },
      timeoutMs,
    });

  it('a response that breaks what airlock needs is an UpstreamError naming the fields', async () => {
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jobId: 5, status: 'exploded' }));
    const err = await failure(c().getExport('job_1'));
    expect(err.code).toBe('AIRLOCK_UPSTREAM_SCHEMA');
    expect(err.message).toMatch(/status: /);
    // The create answer needs its jobId: a wrong one is named.
    const created = await failure(c().startExport('docs.example.com'));
    expect(created.message).toMatch(/jobId: is missing \(must be a text string\)|jobId: must be a text string/);
  });

  it('a non-JSON answer and unknown fields: the first is an error, the second passes through', async () => {
    answer = (res) => res.writeHead(200).end('<html>oops</html>');
    expect((await failure(c().getExport('job_1'))).message).toContain('not JSON');
    answer = (res) => res.writeHead(200).end(JSON.stringify({ jobId: 'j', status: 'running', progress: 5, shiny: true }));
    expect(await c().getExport('j')).toMatchObject({ status: 'running', shiny: true });
  });

  it('a headers timeout is retried, then reported', async () => {
    answer = () => {};
    const t0 = performance.now();
    const err = await failure(c(300).getExport('job_1'));
    expect(err.code).toBe('AIRLOCK_TIMEOUT');
    expect(err.message).toMatch(/no (response headers|complete answer) from 127\.0\.0\.1:\d+ within 0\.3 s/);
    expect(performance.now() - t0).toBeLessThan(3000);
  });

  it('a refused connection is retried and reported with the origin, never the key', async () => {
    const dead = new ServiceClient({ baseUrl: 'http://127.0.0.1:1', adminKey: 'svc_brokentest0123', retry: { retries: 2, baseMs: 1, maxMs: 2 } });
    const err = await failure(dead.startExport('d'));
    expect(err.message).toMatch(/could not connect to 127\.0\.0\.1:1 \(connection refused\) \(3 attempts\)/);
    expect(err.code).toBe('AIRLOCK_NETWORK');
    expect(err.message).not.toContain('svc_brokentest0123');
  });

  it('an assistant stream that ends before [DONE] is an error; a malformed chunk names its field', async () => {
    answer = (res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: {"type":"start"}\n\n');
    const gen = c().assistantMessage('d', { fp: 'f', messages: [{ id: '1', role: 'user', parts: [{ type: 'text', text: 'q' }] }] });
    expect((await gen.next()).value).toEqual({ type: 'start' });
    expect((await failure(gen.next())).code).toBe('AIRLOCK_STREAM_TRUNCATED');
    answer = (res) => res.writeHead(200).end('data: {"type":"text-delta","id":"t"}\n\n');
    const bad = c().assistantMessage('d', { fp: 'f', messages: [{ id: '1', role: 'user', parts: [{ type: 'text', text: 'q' }] }] });
    expect((await failure(bad.next())).message).toMatch(/delta: /);
  });

  it('terminal injection: control characters in a service error text are neutralised', async () => {
    answer = (res) => res.writeHead(400).end(JSON.stringify({ error: 'bad \u001b[31mred\u001b[0m svc_leakedkey12345' }));
    const err = await failure(c().getExport('j'));
    expect(err.message).not.toContain('\u001b');
    expect(err.message).toContain('svc_[REDACTED]');
  });
});
