import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { join } from 'node:path';
import { importPackage } from '../../src/store/index.js';
import { makePackage } from '../helpers/make-package.js';
import { mirrorRig, TOKEN, type MirrorRig } from './rig.js';

let r: MirrorRig;
beforeAll(async () => {
  r = await mirrorRig();
});
afterAll(async () => r.close());

const jobs = '/v1/static-export/jobs';

/** A raw request line: fetch() would normalise the dot segments and encodings under test. */
function raw(path: string, method = 'GET'): Promise<{ status: number; body: string }> {
  const u = new URL(r.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('mirror API: admin tokens', () => {
  it('missing Authorization → 401 {error}', async () => {
    const res = await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'docs.example.com' }), token: null });
    expect(res.status).toBe(401);
    expect(await res.json()).toHaveProperty('error');
  });
  it('wrong token → 403 {error}; a prefix or an extension of the right token is wrong too', async () => {
    for (const token of ['svc_wrong', TOKEN.slice(0, -1), TOKEN + 'x', TOKEN.toUpperCase()]) {
      const res = await r.api(`${jobs}/mv_v1`, { token });
      expect(res.status, token).toBe(403);
      expect(await res.json()).toHaveProperty('error');
    }
  });
  it('a non-Bearer scheme counts as missing (401)', async () => {
    const res = await r.api(`${jobs}/mv_v1`, { token: null, headers: { authorization: `Basic ${Buffer.from('a:' + TOKEN).toString('base64')}` } });
    expect(res.status).toBe(401);
  });
});

describe('mirror API: jobs and bundle', () => {
  it('POST jobs {domain} → 202 completed job of the active version; GET job; bundle link on the mirror without the admin token', async () => {
    const res = await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'docs.example.com' }) });
    expect(res.status).toBe(202);
    const job = (await res.json()) as Record<string, unknown>;
    // The published job record, field for field (the mirror keeps its own mv_ ids).
    expect(Object.keys(job).sort()).toEqual(['createdAt', 'error', 'jobId', 'pageCount', 'progress', 'status', 'updatedAt']);
    expect(job).toMatchObject({ jobId: 'mv_v1', status: 'completed', progress: 100, error: null });
    expect(Number.isInteger(job.pageCount)).toBe(true);
    expect(await (await r.api(`${jobs}/${String(job.jobId)}`)).json()).toEqual(job);
    const b = (await (await r.api(`${jobs}/${String(job.jobId)}/bundle`, { method: 'POST' })).json()) as Record<string, unknown>;
    // The published bundle answer plus the mirror's documented extensions.
    expect(Object.keys(b).sort()).toEqual(['bundleUrl', 'expiresAt', 'jobId', 'packageSha256', 'packageUrl', 'sizeBytes', 'version']);
    expect(b).toMatchObject({ jobId: job.jobId, sizeBytes: expect.any(Number) as number, version: 'v1' });
    expect(String(b.bundleUrl).startsWith(r.url + '/_airlock/objects/v1/bundle.tar.gz?')).toBe(true);
    expect(Date.parse(String(b.expiresAt))).toBeGreaterThan(Date.now());
    expect(JSON.stringify(b)).not.toContain(TOKEN);
    expect(JSON.stringify(b)).not.toContain(TOKEN.slice(4));
  });
  it('version named in the body; unknown domain or version → 404; bad body → 400', async () => {
    expect((await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'docs.example.com', version: 'v1' }) })).status).toBe(202);
    expect((await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'docs.example.com', version: 'v9' }) })).status).toBe(404);
    expect((await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'other.example.com' }) })).status).toBe(404);
    expect((await r.api(jobs, { method: 'POST', body: '{"domain": 5}' })).status).toBe(400);
    // The documented optional fields: validated (400 on a wrong type), null read as absent; `paths` is ignored (whole versions).
    expect((await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'docs.example.com', version: 5 }) })).status).toBe(400);
    expect((await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'docs.example.com', paths: 'guide/' }) })).status).toBe(400);
    expect((await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'docs.example.com', paths: [1] }) })).status).toBe(400);
    expect((await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'docs.example.com', version: null, paths: ['guide/'] }) })).status).toBe(202);
    expect((await r.api(jobs, { method: 'POST', body: 'not json' })).status).toBe(400);
  });

  it('a body naming a key twice (a front proxy taking the first would read another request) → 400 naming the key', async () => {
    const res = await r.api(jobs, { method: 'POST', body: '{"domain":"docs.example.com","domain":"x"}' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain('names the key "domain" twice');
  });
  it('a version whose manifest has pageCount null still answers an integer: its HTML pages (404.html aside)', async () => {
    const { pkgPath, manifest } = await makePackage({
      domain: 'nopages.example.com',
      version: 'np1',
      outDir: join(r.dir, 'np'),
      mutate: (m) => {
        m.pageCount = null;
      },
    });
    await importPackage(pkgPath, { store: r.store, trust: [], allowUnsigned: true });
    const job = (await (await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'nopages.example.com' }) })).json()) as Record<string, unknown>;
    const html = manifest.files.filter((f) => f.path.endsWith('.html') && !f.path.endsWith('404.html')).length;
    expect(html).toBeGreaterThan(0);
    expect(job).toMatchObject({ jobId: 'mv_np1', pageCount: html, error: null });
  });
  it('path traversal through job ids: dot segments, encoded slashes, absent prefix, labels the store lacks → 4xx, never a job', async () => {
    const tricks = [
      'mv_..',
      'mv_.',
      'mv_.hidden',
      'mv_..%2F..%2Fstate.json',
      '..%2Fversions%2Fv1',
      'mv_v1%2F..%2F..',
      'mv_v1%00',
      'mv_%2e%2e',
      'v1',
      'mv_',
      'mv_v1/../../state.json',
      '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      'mv_' + 'a'.repeat(65),
      'MV_v1',
      'mv_v1%20',
    ];
    for (const id of tricks) {
      for (const [path, method] of [
        [`${jobs}/${id}`, 'GET'],
        [`${jobs}/${id}/bundle`, 'POST'],
      ] as const) {
        const res = await raw(path, method);
        expect([400, 404], `${method} ${path} → ${res.status} ${res.body}`).toContain(res.status);
        expect(res.body).not.toContain('"status":"completed"');
      }
    }
  });
});
