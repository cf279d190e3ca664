import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { airlock, airlockAsync } from '../helpers/bin.js';
import {
  DOC_AGENT_COMPLETED,
  DOC_AGENT_FAILED,
  DOC_DOMAIN,
  DOC_FORBIDDEN_KEY,
  DOC_JOB_ID,
  DOC_KEY,
  DOC_PROJECT,
  startPublishedApi,
  type PublishedApi,
} from '../helpers/published-api.js';

/**
 * The whole `airlock fetch` and `airlock agent-job`, through the built binary, against a server
 * that answers exactly the published example bodies (test/helpers/published-api.ts).
 */
let api: PublishedApi | undefined;
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-published-'));
});
afterEach(async () => {
  await api?.close();
  api = undefined;
  await rm(dir, { recursive: true, force: true });
});

const env = (key: string = DOC_KEY) => ({ AIRLOCK_API_URL: api!.url, AIRLOCK_ADMIN_KEY: key });
const noKey = (out: string) => expect(out).not.toMatch(/svc_[A-Za-z0-9_]{6,}/);

describe('airlock fetch against the published API', () => {
  it('succeeds on the documented bodies (202 + error: null, se_ id, extra fields, 409 first): the package verifies', async () => {
    api = await startPublishedApi({ bundle409First: 1 });
    const out = join(dir, 'out');
    const run = await airlockAsync(['fetch', '--domain', DOC_DOMAIN, '--out', out, '--json'], { env: env() });
    expect(run.status, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({
      ok: true,
      jobId: DOC_JOB_ID,
      version: '20250601-120000',
      pageCount: 3,
      signed: false,
      signature: 'none',
      archive: { format: 'tar.gz' },
    });
    expect(run.stderr).toContain('warning: no --sign-key');
    expect(await readdir(out)).toEqual(['docs.example.com-20250601-120000.airlock']);
    expect(api.calls.map((c) => `${c.route} ${c.status}`)).toEqual(['create 202', 'job 200', 'job 200', 'bundle 409', 'bundle 200', 'object 200']);
    expect(api.calls.find((c) => c.route === 'object')!.auth).toBeUndefined();
    const v = airlock(['verify', String(summary.package), '--allow-unsigned', '--json']);
    expect(v.status, v.stderr).toBe(0);
    noKey(run.stdout + run.stderr);
  });

  it('with --sign-key: no unsigned warning, signature "signed", and the package verifies with the key', async () => {
    api = await startPublishedApi({ immediate: true });
    expect(airlock(['keygen', '--out', join(dir, 'release')]).status).toBe(0);
    const run = await airlockAsync(['fetch', '--domain', DOC_DOMAIN, '--out', join(dir, 'out'), '--sign-key', join(dir, 'release.key'), '--json'], {
      env: env(),
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('warning');
    const summary = JSON.parse(run.stdout) as { package: string };
    expect(summary).toMatchObject({ signed: true, signature: 'signed' });
    expect(airlock(['verify', summary.package, '--trust', join(dir, 'release.pub')]).status).toBe(0);
  });

  it('a failed job → exit 3 with the service text; 401 and 403 (not enabled) → exit 5; unknown domain (404) → exit 1; nothing written', async () => {
    api = await startPublishedApi({ failed: true });
    const out = join(dir, 'out');
    const failed = await airlockAsync(['fetch', '--domain', DOC_DOMAIN, '--out', out], { env: env() });
    expect(failed.status).toBe(3);
    expect(failed.stderr).toContain('invalid frontmatter');
    const e401 = await airlockAsync(['fetch', '--domain', DOC_DOMAIN, '--out', out], { env: env('svc_not_a_known_key_000') });
    expect(e401.status).toBe(5);
    expect(e401.stderr).toContain('Invalid API key');
    const e403 = await airlockAsync(['fetch', '--domain', DOC_DOMAIN, '--out', out], { env: env(DOC_FORBIDDEN_KEY) });
    expect(e403.status).toBe(5);
    expect(e403.stderr).toContain('Static export is not enabled for this organization');
    const e404 = await airlockAsync(['fetch', '--domain', 'other.example.com', '--out', out], { env: env() });
    expect(e404.status).toBe(1);
    expect(e404.stderr).toContain('Domain other.example.com not found [AIRLOCK_NOT_FOUND]');
    expect(await readdir(dir)).toEqual([]);
    for (const r of [failed, e401, e403, e404]) noKey(r.stdout + r.stderr);
  });

  it('checks first: an existing package (--version-label) or an --out that is a file is refused before any request', async () => {
    api = await startPublishedApi();
    await writeFile(join(dir, 'docs.example.com-v1.airlock'), 'an older package');
    const exists = await airlockAsync(['fetch', '--domain', DOC_DOMAIN, '--out', dir, '--version-label', 'v1'], { env: env() });
    expect(exists.status).toBe(2);
    expect(exists.stderr).toContain(`${join(dir, 'docs.example.com-v1.airlock')} already exists; remove it or choose another --version-label [AIRLOCK_EXISTS]`);
    const file = join(dir, 'docs.example.com-v1.airlock');
    for (const out of [file, join(file, 'sub')]) {
      const bad = await airlockAsync(['fetch', '--domain', DOC_DOMAIN, '--out', out], { env: env() });
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain(`output folder ${out} `);
      expect(bad.stderr).toMatch(/--out must name a folder.*\[AIRLOCK_OUT_PATH\]/);
    }
    expect(api.calls).toEqual([]);
  });

  it('checks before waiting: without --version-label the name comes from the 202 answer, refused before any poll', async () => {
    api = await startPublishedApi();
    await writeFile(join(dir, 'docs.example.com-20250601-120000.airlock'), 'an older package');
    const run = await airlockAsync(['fetch', '--domain', DOC_DOMAIN, '--out', dir], { env: env() });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('already exists');
    expect(api.calls.map((c) => c.route)).toEqual(['create']);
  });
});

describe('airlock agent-job', () => {
  it('--wait polls to completed and prints prLink on stdout (status on stderr); --json prints the documented fields', async () => {
    api = await startPublishedApi();
    const run = await airlockAsync(['agent-job', DOC_PROJECT, DOC_AGENT_COMPLETED, '--wait', '--timeout', '20'], { env: env() });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe('https://github.com/example/docs/pull/17\n');
    expect(run.stderr).toContain(`agent job ${DOC_AGENT_COMPLETED} (project ${DOC_PROJECT}): completed`);
    const json = await airlockAsync(['agent-job', DOC_PROJECT, DOC_AGENT_COMPLETED, '--json'], { env: env() });
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: true,
      projectId: DOC_PROJECT,
      job: {
        id: DOC_AGENT_COMPLETED,
        status: 'completed',
        source: { repository: 'example/docs', ref: 'main' },
        model: 'agent-model-1',
        prLink: 'https://github.com/example/docs/pull/17',
        createdAt: '2025-06-01T12:00:00Z',
        archivedAt: null,
      },
    });
  });

  it('without --wait an active job is read once: no link on stdout, exit 0', async () => {
    api = await startPublishedApi();
    const run = await airlockAsync(['agent-job', DOC_PROJECT, DOC_AGENT_FAILED], { env: env() });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('active, no pull request link yet');
    expect(api.calls.filter((c) => c.route === 'agent')).toHaveLength(1);
  });

  it('a failed job → exit 3 (with --json too); unknown job → exit 1 with the service text', async () => {
    api = await startPublishedApi();
    const run = await airlockAsync(['agent-job', DOC_PROJECT, DOC_AGENT_FAILED, '--wait', '--json'], { env: env() });
    expect(run.status).toBe(3);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, code: 'AIRLOCK_JOB_FAILED', exitCode: 3, job: { status: 'failed', prLink: null } });
    expect(run.stderr).toContain('[AIRLOCK_JOB_FAILED]');
    const missing = await airlockAsync(['agent-job', DOC_PROJECT, 'agj_nope'], { env: env() });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('Agent job not found [AIRLOCK_NOT_FOUND]');
  });

  it('auth: no key, an assistant key, a refused key → exit 5; usage errors → exit 2; no request for either', async () => {
    api = await startPublishedApi();
    expect(
      (await airlockAsync(['agent-job', DOC_PROJECT, DOC_AGENT_COMPLETED], { env: { AIRLOCK_API_URL: api.url, AIRLOCK_ADMIN_KEY: undefined } })).status,
    ).toBe(5);
    expect((await airlockAsync(['agent-job', DOC_PROJECT, DOC_AGENT_COMPLETED], { env: env('svc_dsc_assistant_key_000') })).status).toBe(5);
    expect(api.calls).toEqual([]);
    const refused = await airlockAsync(['agent-job', DOC_PROJECT, DOC_AGENT_COMPLETED], { env: env('svc_not_a_known_key_000') });
    expect(refused.status).toBe(5);
    api.calls.length = 0;
    for (const args of [
      [DOC_PROJECT],
      [DOC_PROJECT, 'a', 'b'],
      [DOC_PROJECT, 'a b'],
      [DOC_PROJECT, 'x', '--timeout', '5'],
      [DOC_PROJECT, 'x', '--wait', '--timeout', '0'],
      [DOC_PROJECT, 'x', '--frobnicate'],
    ]) {
      const r = await airlockAsync(['agent-job', ...args], { env: env() });
      expect(r.status, args.join(' ')).toBe(2);
    }
    expect((await airlockAsync(['agent-job', DOC_PROJECT, 'x'], { env: { AIRLOCK_ADMIN_KEY: DOC_KEY, AIRLOCK_API_URL: '' } })).status).toBe(2);
    expect(api.calls).toEqual([]);
  });

  it('--help names every option and the exit codes', () => {
    const r = airlock(['agent-job', '--help']);
    expect(r.status).toBe(0);
    for (const s of [
      'PROJECT_ID JOB_ID',
      '--wait',
      '--timeout SECONDS',
      '--api-url URL',
      '--json',
      'AIRLOCK_ADMIN_KEY',
      'Exit codes',
      '3 the agent job failed',
      '5 auth',
      '2 usage',
    ]) {
      expect(r.stdout).toContain(s);
    }
    expect(airlock(['--help']).stdout).toMatch(/agent-job +read an agent job/);
  });
});
