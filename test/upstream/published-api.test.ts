import { afterEach, describe, expect, it } from 'vitest';
import { AirlockError, AuthError, EXIT } from '../../src/errors.js';
import { ServiceClient } from '../../src/upstream/index.js';
import {
  DOC_AGENT_COMPLETED,
  DOC_AGENT_FAILED,
  DOC_DOMAIN,
  DOC_FORBIDDEN_KEY,
  DOC_JOB_ID,
  DOC_KEY,
  DOC_PROJECT,
  docJob,
  startPublishedApi,
  type PublishedApi,
} from '../helpers/published-api.js';

/**
 * Conformance: the real client against the documented example bodies, served verbatim by a plain
 * node:http server written from the documentation alone (test/helpers/published-api.ts).
 */
let api: PublishedApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const client = (key = DOC_KEY) => new ServiceClient({ baseUrl: api!.url, adminKey: key, retry: { retries: 1, baseMs: 1, maxMs: 2 } });
async function failure(p: Promise<unknown>): Promise<AirlockError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AirlockError);
  return err as AirlockError;
}

describe('the client against the published API', () => {
  it('POST jobs: the documented 202 with the whole job record, error: null and unknown fields, is accepted', async () => {
    api = await startPublishedApi();
    const job = await client().startExport(DOC_DOMAIN);
    expect(job).toMatchObject({ jobId: DOC_JOB_ID, status: 'queued', progress: 0, pageCount: 0, createdAt: '2025-06-01T12:00:00Z', organizationId: 'org_42' });
    expect(job.error).toBeUndefined();
    expect(api.calls[0]).toMatchObject({ route: 'create', status: 202, body: JSON.stringify({ domain: DOC_DOMAIN }) });
  });

  it('GET job: running, then completed with an integer pageCount; a failed job carries its error text', async () => {
    api = await startPublishedApi();
    const c = client();
    expect(await c.getExport(DOC_JOB_ID)).toMatchObject({ jobId: DOC_JOB_ID, status: 'running', progress: 40, pageCount: 1 });
    expect(await c.getExport(DOC_JOB_ID)).toMatchObject({ status: 'completed', progress: 100, pageCount: 3, links: { self: expect.any(String) as string } });
    await api.close();
    api = await startPublishedApi({ failed: true });
    const f = client();
    await f.getExport(DOC_JOB_ID);
    expect(await f.getExport(DOC_JOB_ID)).toMatchObject({ status: 'failed', error: expect.stringContaining('invalid frontmatter') as string });
  });

  it('bundle: 409 {error} before completion is AIRLOCK_NOT_READY with the text; then {jobId, bundleUrl, sizeBytes, expiresAt}', async () => {
    api = await startPublishedApi();
    const c = client();
    const early = await failure(c.getBundle(DOC_JOB_ID));
    expect(early).toMatchObject({ code: 'AIRLOCK_NOT_READY', status: 409, exitCode: EXIT.FAILURE });
    expect(early.message).toContain('Job is not completed yet');
    await c.getExport(DOC_JOB_ID);
    await c.getExport(DOC_JOB_ID);
    const link = await c.getBundle(DOC_JOB_ID);
    expect(link).toMatchObject({ jobId: DOC_JOB_ID, sizeBytes: api.archive.length });
    expect(link.bundleUrl).toMatch(/\/exports\/se_3f9a2c1b8e7d4a06\/bundle\.tar\.gz\?X-Amz-Signature=/);
    expect(Date.parse(link.expiresAt!)).toBeGreaterThan(Date.now());
  });

  it('documented errors: 400 and 404 name the service text (exit 1); 401 and 403 (static export not enabled) are auth (exit 5)', async () => {
    api = await startPublishedApi();
    api.answers.create = (n) => (n === 0 ? { status: 400, body: { error: 'paths must be an array of strings' } } : undefined);
    const e400 = await failure(client().startExport(DOC_DOMAIN));
    expect(e400).toMatchObject({ status: 400, exitCode: 1, code: 'AIRLOCK_UPSTREAM' });
    expect(e400.message).toContain('paths must be an array of strings');
    const e404 = await failure(client().startExport('other.example.com'));
    expect(e404).toMatchObject({ status: 404, code: 'AIRLOCK_NOT_FOUND', exitCode: 1 });
    expect(e404.message).toContain('Domain other.example.com not found');
    expect((await failure(client().getExport('se_0000000000000000'))).message).toContain('Job not found');
    const e401 = await failure(client('svc_not_a_known_key_000').startExport(DOC_DOMAIN));
    expect(e401).toBeInstanceOf(AuthError);
    expect(e401).toMatchObject({ code: 'AIRLOCK_UNAUTHORIZED', exitCode: EXIT.AUTH });
    const e403 = await failure(client(DOC_FORBIDDEN_KEY).startExport(DOC_DOMAIN));
    expect(e403).toMatchObject({ code: 'AIRLOCK_FORBIDDEN', exitCode: EXIT.AUTH });
    expect(e403.message).toContain('Static export is not enabled for this organization');
  });

  it('agent job: the documented record (prLink null while active) is read; waitForAgentJob ends on completed or failed', async () => {
    api = await startPublishedApi();
    const c = client();
    const active = await c.getAgentJob(DOC_PROJECT, DOC_AGENT_COMPLETED);
    expect(active).toMatchObject({
      id: DOC_AGENT_COMPLETED,
      status: 'active',
      source: { repository: 'example/docs', ref: 'main' },
      model: 'agent-model-1',
      projectId: DOC_PROJECT,
    });
    expect(active.prLink).toBeUndefined();
    const done = await c.waitForAgentJob(DOC_PROJECT, DOC_AGENT_COMPLETED, { intervalMs: 10, timeoutMs: 5000 });
    expect(done).toMatchObject({ status: 'completed', prLink: 'https://github.com/example/docs/pull/17' });
    const failed = await c.waitForAgentJob(DOC_PROJECT, DOC_AGENT_FAILED, { intervalMs: 10, timeoutMs: 5000 });
    expect(failed.status).toBe('failed');
    expect((await failure(c.getAgentJob(DOC_PROJECT, 'agj_nope'))).message).toContain('Agent job not found');
  });

  it('tolerance, exactly as far as the contract says: null for every optional field and extra fields pass; a missing status or an unknown one does not', async () => {
    api = await startPublishedApi();
    const c = client();
    api.answers.job = () => ({
      status: 200,
      body: { jobId: DOC_JOB_ID, status: 'running', progress: null, pageCount: null, createdAt: null, updatedAt: null, error: null, future: [1, 2] },
    });
    expect(await c.getExport(DOC_JOB_ID)).toMatchObject({ jobId: DOC_JOB_ID, status: 'running', future: [1, 2] });
    api.answers.job = () => ({ status: 200, body: { status: 'completed' } });
    expect(await c.getExport(DOC_JOB_ID)).toEqual({ jobId: DOC_JOB_ID, status: 'completed' });
    api.answers.job = () => ({ status: 200, body: { ...docJob('completed', 100, 3), status: undefined } });
    expect((await failure(c.getExport(DOC_JOB_ID))).code).toBe('AIRLOCK_UPSTREAM_SCHEMA');
    api.answers.job = () => ({ status: 200, body: docJob('paused', 10, 1) });
    expect((await failure(c.getExport(DOC_JOB_ID))).message).toMatch(/status: /);
    api.answers.bundle = () => ({
      status: 200,
      body: { bundleUrl: 'https://objects.example.com/b.tar.gz?sig=1', sizeBytes: null, expiresAt: null, jobId: null },
    });
    expect(await c.getBundle(DOC_JOB_ID)).toMatchObject({ bundleUrl: 'https://objects.example.com/b.tar.gz?sig=1' });
    api.answers.bundle = () => ({ status: 200, body: { bundleUrl: 'file:///etc/passwd', sizeBytes: 1, expiresAt: '2030-01-01T00:00:00Z' } });
    expect((await failure(c.getBundle(DOC_JOB_ID))).code).toBe('AIRLOCK_UPSTREAM_SCHEMA');
    api.answers.agent = () => ({
      status: 200,
      body: { id: null, status: 'completed', source: null, model: null, prLink: null, createdAt: null, archivedAt: null },
    });
    expect(await c.getAgentJob(DOC_PROJECT, 'agj_x')).toMatchObject({ id: 'agj_x', status: 'completed' });
  });

  it('an answer nested thousands deep is refused before parsing, naming the call (no stack overflow)', async () => {
    api = await startPublishedApi();
    api.answers.job = () => ({ status: 200, raw: true, body: `{"status":"running","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}` });
    const err = await failure(client().getExport(DOC_JOB_ID));
    expect(err).toMatchObject({ code: 'AIRLOCK_UPSTREAM_SCHEMA', exitCode: 1 });
    expect(err.message).toContain('deeper than 64 levels');
  });
});
