import { describe, expect, it } from 'vitest';
import { airlockAsync, type RunResult } from '../helpers/bin.js';
import { jsonMutants } from '../helpers/mutate.js';
import {
  DOC_AGENT_COMPLETED,
  DOC_DOMAIN,
  DOC_KEY,
  DOC_PROJECT,
  docAgentJob,
  docBundle,
  docJob,
  expectFetchLeftovers,
  fuzzApiForFile,
} from '../helpers/published-api.js';

/**
 * A sample of the API answer fuzz through the built binary (the library runs many more:
 * test/fetch/api-fuzz.test.ts): `airlock fetch` and `airlock agent-job` on mutated answers end
 * with the contract's exit code and a coded message (never AIRLOCK_INTERNAL), print no control
 * character, and leave no package and nothing but the resumable part and its sidecar.
 */
const fz = fuzzApiForFile('airlock-api-fuzz-cli-', { immediate: true });
const serve = fz.serve;
const env = () => ({ AIRLOCK_API_URL: fz.api.url, AIRLOCK_ADMIN_KEY: DOC_KEY });

/** The contract's promises about any run, whatever the answer was. */
function checkRun(r: RunResult, what: string, allowed: number[]) {
  expect(allowed, `${what}: exit ${r.status} ${r.stderr}`).toContain(r.status);
  // eslint-disable-next-line no-control-regex -- finding control characters is the point (terminal injection)
  expect(r.stdout + r.stderr, what).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  if (r.status !== 0) {
    const last = r.stderr.trim().split('\n').at(-1)!;
    expect(last, what).toMatch(/\[AIRLOCK_[A-Z_]+\]$/);
    expect(last, what).not.toContain('AIRLOCK_INTERNAL');
  }
}

async function fetchRun(what: string, allowed: number[]) {
  const out = fz.out();
  const r = await airlockAsync(['fetch', '--domain', DOC_DOMAIN, '--out', out], { env: env(), timeoutMs: 20_000 });
  checkRun(r, what, allowed);
  await expectFetchLeftovers(out, r.status === 0, what);
}

describe('API answer fuzz through the built binary', () => {
  it('airlock fetch: 4 mutants each of the create, job and bundle answers', async () => {
    for (const m of jsonMutants(docJob('queued', 0, 0), 4, 0xc1)) {
      serve('create', () => ({ status: 202, body: m.value }));
      await fetchRun(`create ${m.what}`, [0, 1]);
    }
    for (const m of jsonMutants(docJob('completed', 100, 3), 4, 0xc2)) {
      serve('job', () => ({ status: 200, body: m.value }));
      await fetchRun(`job ${m.what}`, [0, 1]);
    }
    for (const m of jsonMutants(docBundle(fz.api), 4, 0xc3)) {
      serve('bundle', () => ({ status: 200, body: m.value }));
      await fetchRun(`bundle ${m.what}`, [0, 1, 4]);
    }
  }, 40_000);

  it('airlock fetch: a mutated error body of each status 400, 401, 403, 404 → 1, 5, 5, 1', async () => {
    for (const [status, want] of [
      [400, 1],
      [401, 5],
      [403, 5],
      [404, 1],
    ] as const) {
      for (const m of jsonMutants({ error: 'Job not found' }, 1, status)) {
        serve('create', () => ({ status, body: m.value }));
        await fetchRun(`${status} ${m.what}`, [want]);
      }
    }
  }, 20_000);

  it('airlock agent-job --wait: 6 mutants of the completed job → 0 or 1; stdout is the prLink line or nothing', async () => {
    for (const m of jsonMutants(docAgentJob(DOC_AGENT_COMPLETED, 'completed', 'https://github.com/example/docs/pull/17'), 6, 0xc4)) {
      serve('agent', () => ({ status: 200, body: m.value }));
      const r = await airlockAsync(['agent-job', DOC_PROJECT, DOC_AGENT_COMPLETED, '--wait', '--timeout', '5'], { env: env(), timeoutMs: 20_000 });
      checkRun(r, m.what, [0, 1]);
      if (r.status === 0) expect(r.stdout, m.what).toMatch(/^(https:\/\/github\.com\/example\/docs\/pull\/17\n|)$|^\S+\n$/);
    }
  }, 20_000);
});
