import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_FAULTS, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { FAST, tinySite } from './site.js';

/**
 * Writers are exact: the emulator's answers are checked key for key against the published API
 * (the service's API as published), never through our client's tolerant schemas.
 */
let emu: RunningEmulator;
let site: ReturnType<typeof tinySite>;
/**
 * The emulator's clock, moved only by the tests. Job states are a function of time (40 ms queued,
 * 160 ms running, 60 ms active): on the wall clock a request delayed by a loaded machine could land
 * after the state it was meant to see, so each test reads a state, then advances the clock itself.
 */
let clock = Date.now();
beforeAll(async () => {
  site = tinySite();
  emu = await startEmulator({
    sites: { 'docs.example.com': { dir: site.dir } },
    timings: FAST,
    agentJobMs: 60,
    now: () => clock,
    agentJobs: [
      { projectId: 'p1', id: 'agj_ok', outcome: 'completed' },
      { projectId: 'p1', id: 'agj_bad', outcome: 'failed' },
      { projectId: 'p1', id: 'agj_old', outcome: 'archived' },
    ],
  });
});
afterAll(async () => {
  await emu.close();
  site.cleanup();
});
beforeEach(() => {
  emu.setFaults({ ...DEFAULT_FAULTS });
});

async function call(method: 'GET' | 'POST', path: string, o: { key?: string | null; body?: unknown; raw?: string } = {}) {
  const key = o.key === undefined ? emu.keys.admin : o.key;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) };
  const res = await request(emu.url + path, { method, headers, body: o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body)) });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
}

const JOB_KEYS = ['createdAt', 'error', 'jobId', 'pageCount', 'progress', 'status', 'updatedAt'];
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const keys = (o: Record<string, unknown>) => Object.keys(o).sort();

function expectJobRecord(j: Record<string, unknown>) {
  expect(keys(j)).toEqual(JOB_KEYS);
  expect(j.jobId).toMatch(/^se_[0-9a-f]{16}$/);
  expect(['queued', 'running', 'completed', 'failed']).toContain(j.status);
  expect(typeof j.progress === 'number' && j.progress >= 0 && j.progress <= 100).toBe(true);
  expect(Number.isInteger(j.pageCount)).toBe(true);
  expect(j.createdAt).toMatch(RFC3339);
  expect(j.updatedAt).toMatch(RFC3339);
  if (j.status === 'failed') expect(j.error).toBeTypeOf('string');
  else expect(j.error).toBeNull();
}

describe('emulator: the published static-export shapes, field for field', () => {
  it('POST jobs → 202 with the whole job record (se_ id, error null); GET → the same shape through to completed', async () => {
    const created = await call('POST', '/v1/static-export/jobs', { body: { domain: 'docs.example.com' } });
    expect(created.status).toBe(202);
    expectJobRecord(created.json);
    expect(created.json).toMatchObject({ status: 'queued', progress: 0, pageCount: 0, error: null });
    const id = String(created.json.jobId);
    const seen = new Set<string>();
    let last = created.json;
    for (let i = 0; i < 100 && last.status !== 'completed'; i++) {
      const r = await call('GET', `/v1/static-export/jobs/${id}`);
      expect(r.status).toBe(200);
      expectJobRecord(r.json);
      last = r.json;
      seen.add(String(last.status));
      clock += 10;
    }
    // Polled every 10 ms of the emulator's time: every state is seen, in order, whatever the machine's speed.
    expect([...seen]).toEqual(['queued', 'running', 'completed']);
    expect(last).toMatchObject({ jobId: id, progress: 100, pageCount: 3, error: null });
  });

  it('bundle: 409 {error} until completed, then 200 {jobId, bundleUrl, sizeBytes, expiresAt} with an RFC 3339 expiry', async () => {
    const id = String((await call('POST', '/v1/static-export/jobs', { body: { domain: 'docs.example.com' } })).json.jobId);
    const early = await call('POST', `/v1/static-export/jobs/${id}/bundle`);
    expect(early.status).toBe(409);
    expect(keys(early.json)).toEqual(['error']);
    expect(early.json.error).toBeTypeOf('string');
    // Still 409 in the last millisecond of the run, 200 from the instant the job is completed.
    clock += FAST.queuedMs + FAST.runningMs - 1;
    expect((await call('POST', `/v1/static-export/jobs/${id}/bundle`)).status).toBe(409);
    clock += 1;
    const ok = await call('POST', `/v1/static-export/jobs/${id}/bundle`);
    expect(ok.status).toBe(200);
    expect(keys(ok.json)).toEqual(['bundleUrl', 'expiresAt', 'jobId', 'sizeBytes']);
    expect(ok.json.jobId).toBe(id);
    expect(String(ok.json.bundleUrl)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(Number.isInteger(ok.json.sizeBytes) && (ok.json.sizeBytes as number) > 0).toBe(true);
    expect(ok.json.expiresAt).toMatch(RFC3339);
  });

  it('a failed job: status failed, error a string, still the seven keys', async () => {
    emu.setFaults({ failingDomains: ['docs.example.com'] });
    const id = String((await call('POST', '/v1/static-export/jobs', { body: { domain: 'docs.example.com' } })).json.jobId);
    clock += FAST.queuedMs + FAST.runningMs;
    const r = await call('GET', `/v1/static-export/jobs/${id}`);
    expectJobRecord(r.json);
    expect(r.json.status).toBe('failed');
    expect(await call('POST', `/v1/static-export/jobs/${id}/bundle`)).toMatchObject({ status: 409 });
  });

  it('errors are exactly {error}: 400 (bad body, wrong types of version/paths), 401, 403 (not enabled, wrong key kind), 404', async () => {
    const cases: Array<[number, Promise<{ status: number; json: Record<string, unknown> }>]> = [
      [400, call('POST', '/v1/static-export/jobs', { raw: 'not json' })],
      [400, call('POST', '/v1/static-export/jobs', { body: { domain: 5 } })],
      [400, call('POST', '/v1/static-export/jobs', { body: { domain: 'docs.example.com', version: 3 } })],
      [400, call('POST', '/v1/static-export/jobs', { body: { domain: 'docs.example.com', paths: 'guide/' } })],
      [400, call('POST', '/v1/static-export/jobs', { body: { domain: 'docs.example.com', paths: ['ok', 7] } })],
      [401, call('POST', '/v1/static-export/jobs', { key: null, body: { domain: 'docs.example.com' } })],
      [401, call('GET', '/v1/static-export/jobs/se_0000000000000000', { key: 'svc_unknown0123456789' })],
      [403, call('GET', '/v1/static-export/jobs/se_0000000000000000', { key: emu.keys.assistant })],
      [404, call('GET', '/v1/static-export/jobs/se_0000000000000000')],
      [404, call('POST', '/v1/static-export/jobs/se_0000000000000000/bundle')],
      [404, call('POST', '/v1/static-export/jobs', { body: { domain: 'nope.example.com' } })],
    ];
    for (const [status, p] of cases) {
      const r = await p;
      expect(r.status).toBe(status);
      expect(keys(r.json)).toEqual(['error']);
      expect(r.json.error).toBeTypeOf('string');
    }
    emu.setFaults({ staticExportDisabled: true });
    for (const [m, path] of [
      ['POST', '/v1/static-export/jobs'],
      ['GET', '/v1/static-export/jobs/se_0000000000000000'],
      ['POST', '/v1/static-export/jobs/se_0000000000000000/bundle'],
    ] as const) {
      const r = await call(m, path, { body: { domain: 'docs.example.com' } });
      expect(r).toEqual({ status: 403, json: { error: 'static export is not enabled for this organization' } });
    }
  });

  it('the optional request fields version (string) and paths (string array) are accepted, null reads as absent', async () => {
    for (const body of [
      { domain: 'docs.example.com', version: 'v2.1', paths: ['guide/', 'index.html'] },
      { domain: 'docs.example.com', version: null, paths: null },
      { domain: 'docs.example.com', unknownField: { nested: true } },
    ]) {
      const r = await call('POST', '/v1/static-export/jobs', { body });
      expect(r.status).toBe(202);
      expectJobRecord(r.json);
    }
    const job = emu.state.jobs.get([...emu.state.jobs.keys()].at(-3)!)!;
    expect(job).toMatchObject({ version: 'v2.1', paths: ['guide/', 'index.html'] });
  });
});

describe('emulator: the published agent-job shape', () => {
  const AGENT_KEYS = ['archivedAt', 'createdAt', 'id', 'model', 'prLink', 'source', 'status'];
  it('seeded jobs: active, then completed (prLink), failed (prLink null) or archived (archivedAt)', async () => {
    const fresh = emu.state.addAgentJob('p1', 'completed', clock);
    const active = await call('GET', `/v2/agent/p1/job/${fresh.id}`);
    expect(keys(active.json)).toEqual(AGENT_KEYS);
    expect(active.json).toMatchObject({ status: 'active', prLink: null, archivedAt: null });
    // Past the 60 ms active time of every job, the seeded ones (made at start-up) included.
    clock += 80;
    const want = { agj_ok: 'completed', agj_bad: 'failed', agj_old: 'archived' } as const;
    for (const [id, status] of Object.entries(want)) {
      const r = await call('GET', `/v2/agent/p1/job/${id}`);
      expect(r.status).toBe(200);
      expect(keys(r.json)).toEqual(AGENT_KEYS);
      expect(keys(r.json.source as Record<string, unknown>)).toEqual(['ref', 'repository']);
      expect(r.json).toMatchObject({ id, status, model: expect.any(String) as string });
      expect(r.json.createdAt).toMatch(RFC3339);
      if (status === 'completed') expect(r.json.prLink).toMatch(/^https:\/\//);
      else expect(r.json.prLink).toBeNull();
      if (status === 'archived') expect(r.json.archivedAt).toMatch(RFC3339);
      else expect(r.json.archivedAt).toBeNull();
    }
  });

  it('errors are {error}: 404 unknown job or project, 401 without a key, 403 with an assistant key', async () => {
    for (const [status, p] of [
      [404, call('GET', '/v2/agent/p1/job/agj_nope')],
      [404, call('GET', '/v2/agent/p2/job/agj_ok')],
      [401, call('GET', '/v2/agent/p1/job/agj_ok', { key: null })],
      [403, call('GET', '/v2/agent/p1/job/agj_ok', { key: emu.keys.assistant })],
    ] as const) {
      const r = await p;
      expect(r.status).toBe(status);
      expect(keys(r.json)).toEqual(['error']);
    }
  });

  it('the control endpoint makes a job with a chosen id and outcome; bad seeds are 400', async () => {
    const r = await request(`${emu.url}/_emulator/agent-jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: 'p9', id: 'agj_mine', outcome: 'failed' }),
    });
    expect(r.statusCode).toBe(201);
    expect(await r.body.json()).toEqual({ projectId: 'p9', id: 'agj_mine' });
    const bad = await request(`${emu.url}/_emulator/agent-jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: 'p9', id: '../x' }),
    });
    expect(bad.statusCode).toBe(400);
    await bad.body.dump();
  });
});
