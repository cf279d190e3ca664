import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { AirlockError } from '../../src/errors.js';
import { fetchPackage } from '../../src/fetch/index.js';
import { ServiceClient } from '../../src/upstream/index.js';
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
 * Bounded mutation fuzz of every API answer fetch reads (create, job, bundle, agent job, error
 * bodies), served by the published-API server to the real client and to the whole fetchPackage:
 * each run either succeeds with exactly one package in the output folder, or fails with a coded
 * error and the contract's exit code — never AIRLOCK_INTERNAL — leaving no package and nothing in
 * the output folder but the documented resumable part and its sidecar.
 */
const fz = fuzzApiForFile('airlock-api-fuzz-');
const serve = fz.serve;
const client = () => new ServiceClient({ baseUrl: fz.api.url, adminKey: DOC_KEY, retry: { retries: 1, baseMs: 1, maxMs: 2 }, timeoutMs: 5000 });

/** One fetch against the current answers; returns the exit code it would end with. */
async function fetchOnce(what: string): Promise<number> {
  const out = fz.out();
  const r = await fetchPackage({
    client: client(),
    domain: DOC_DOMAIN,
    outDir: out,
    pollIntervalMs: 2,
    pollTimeoutMs: 5000,
    downloadRetry: { retries: 1, baseMs: 1, maxMs: 2 },
  }).then(
    () => 0,
    (err: unknown) => {
      expect(err, what).toBeInstanceOf(AirlockError);
      const e = err as AirlockError;
      expect(e.code, `${what}: ${e.message}`).not.toBe('AIRLOCK_INTERNAL');
      // eslint-disable-next-line no-control-regex -- finding control characters is the point (terminal injection)
      expect(e.message, what).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      return e.exitCode;
    },
  );
  await expectFetchLeftovers(out, r === 0, what);
  await rm(out, { recursive: true, force: true });
  return r;
}

describe('API answer fuzz (library): fetch', () => {
  it.each([
    ['create', () => docJob('queued', 0, 0), [0, 1]],
    ['job (running)', () => docJob('running', 40, 1), [0, 1]],
    ['job (completed)', () => docJob('completed', 100, 3), [0, 1]],
    ['bundle', () => docBundle(fz.api), [0, 1, 4]],
  ] as const)(
    '%s: 60 mutants → exit 0, 1 or 4 per the contract, no INTERNAL, no litter',
    async (name, documented, allowed) => {
      const seen = new Map<number, number>();
      for (const m of jsonMutants(documented(), 60, 0xa11 + name.length)) {
        if (name === 'create') serve('create', () => ({ status: 202, body: m.value }));
        else if (name === 'job (running)') serve('job', (n) => (n === 0 ? { status: 200, body: m.value } : undefined));
        else if (name === 'job (completed)') serve('job', (n) => (n >= 1 ? { status: 200, body: m.value } : undefined));
        else serve('bundle', () => ({ status: 200, body: m.value }));
        const code = await fetchOnce(`${name} #${m.index} ${m.what}`);
        expect(allowed as readonly number[], `${name} #${m.index} ${m.what} → exit ${code}`).toContain(code);
        seen.set(code, (seen.get(code) ?? 0) + 1);
      }
      // The mutants reach both sides: tolerated (exit 0) and refused.
      expect(seen.get(0)).toBeGreaterThan(0);
      expect([...seen.keys()].some((c) => c !== 0)).toBe(true);
    },
    20_000,
  );

  it('error bodies: 40 mutants each of 400, 401, 403, 404 → 1, 5, 5, 1; a mutated 409 before the link is waited out', async () => {
    const want: Record<number, number> = { 400: 1, 401: 5, 403: 5, 404: 1 };
    for (const status of [400, 401, 403, 404, 409]) {
      for (const m of jsonMutants({ error: 'Static export is not enabled for this organization' }, 40, status)) {
        if (status === 409) serve('bundle', (n) => (n === 0 ? { status, body: m.value } : undefined));
        else serve('create', () => ({ status, body: m.value }));
        expect(await fetchOnce(`${status} #${m.index} ${m.what}`), `${status} ${m.what}`).toBe(want[status] ?? 0);
      }
    }
  }, 20_000);
});

describe('API answer fuzz (library): agent job', () => {
  it('60 mutants of the completed agent job → read or a coded exit-1 error, never INTERNAL', async () => {
    let ok = 0;
    for (const m of jsonMutants(docAgentJob(DOC_AGENT_COMPLETED, 'completed', 'https://github.com/example/docs/pull/17'), 60, 0xa6e)) {
      serve('agent', () => ({ status: 200, body: m.value }));
      const r = await client()
        .waitForAgentJob(DOC_PROJECT, DOC_AGENT_COMPLETED, { intervalMs: 1, timeoutMs: 2000 })
        .then(
          (job) => {
            ok++;
            expect(job.id).toBe(DOC_AGENT_COMPLETED);
            return 0;
          },
          (err: unknown) => {
            expect(err, m.what).toBeInstanceOf(AirlockError);
            expect((err as AirlockError).code, m.what).toBe('AIRLOCK_UPSTREAM_SCHEMA');
            return (err as AirlockError).exitCode;
          },
        );
      expect([0, 1], m.what).toContain(r);
    }
    expect(ok).toBeGreaterThan(0);
  }, 20_000);
});
