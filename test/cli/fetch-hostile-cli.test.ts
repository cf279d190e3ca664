import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlockAsync, startAirlock, type RunResult } from '../helpers/bin.js';
import { resolveDownloadLimits } from '../../src/fetch/bounds.js';

/**
 * `airlock fetch` against a hostile export API on 127.0.0.1: each behaviour lives under its own
 * path prefix (`--api-url http://127.0.0.1:PORT/m/<mode>`). Whatever the service does, fetch ends
 * in bounded time with an exit code, a bracketed AIRLOCK_ code and plain words.
 */
const KEY = 'svc_hostilefetchkey0123456789';
const ENV = { AIRLOCK_ADMIN_KEY: KEY, AIRLOCK_ADMIN_KEY_FILE: undefined, AIRLOCK_API_URL: undefined };
let dir: string;
let server: Server;
let base: string;
/** Resolvers waiting for a mode's POST /jobs to arrive. */
const posted = new Map<string, () => void>();
const open = new Set<ServerResponse>();
/** GETs of the object, by mode. */
const objectGets = new Map<string, number>();

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Zeros as fast as the socket takes them, with no Content-Length, until the client goes away. */
function endless(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  const chunk = Buffer.alloc(64 * 1024);
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
  };
  res.on('drain', pump);
  pump();
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const m = /^\/m\/([a-z_]+)(\/.*)$/.exec(req.url ?? '');
  if (!m) return json(res, 404, { error: 'no such mode' });
  const [, mode, path] = m as unknown as [string, string, string];
  open.add(res);
  res.on('close', () => open.delete(res));
  if (req.method === 'GET' && path.startsWith('/v2/agent/')) {
    if (mode === 'never_respond') return; // the connection stays open, the answer never comes
    if (mode === 'trickle') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const t = setInterval(() => res.write(' '), 200);
      res.on('close', () => clearInterval(t));
      return;
    }
  }
  if (req.method === 'POST' && path === '/v1/static-export/jobs') {
    posted.get(mode)?.();
    if (mode === 'never_respond') return; // the connection stays open, the answer never comes
    if (mode === 'status_bad') return json(res, 202, { jobId: 'j1', status: 'exploded\u001b[31m' });
    return json(res, 202, { jobId: 'j1', status: 'queued', createdAt: '2026-01-01T00:00:00Z' });
  }
  if (req.method === 'GET' && path === '/v1/static-export/jobs/j1') {
    if (mode === 'failed_esc') return json(res, 200, { jobId: 'j1', status: 'failed', error: 'disk\u001b[2J full \u202e evil' });
    if (mode === 'dup_status') {
      const text = '{"jobId":"j1","status":"running","status":"completed"}';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      return void res.end(text);
    }
    return json(res, 200, { jobId: 'j1', status: 'completed', createdAt: '2026-01-01T00:00:00Z' });
  }
  if (req.method === 'POST' && path === '/v1/static-export/jobs/j1/bundle') {
    const sizeBytes = mode === 'huge_size' ? 1e18 : mode === 'fraction_size' ? 302.5 : mode === 'string_size' ? '303' : mode === 'array_size' ? [303] : 303;
    return json(res, 200, { jobId: 'j1', bundleUrl: `${base}/m/${mode}/object?X-Amz-Signature=secret-signature`, sizeBytes });
  }
  if (req.method === 'GET' && path.startsWith('/object')) {
    if (mode === 'endless_bundle') return endless(res);
    if (mode === 'huge_size' || mode === 'fraction_size' || mode === 'string_size' || mode === 'array_size') {
      objectGets.set(mode, (objectGets.get(mode) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 303 });
      return void res.end(Buffer.alloc(303));
    }
    if (mode === 'stall_bundle') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 303 });
      res.write(Buffer.alloc(50));
      return; // then silence
    }
  }
  json(res, 404, { error: 'not found' });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-fetch-hostile-'));
  server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const res of open) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

const codeOf = (r: { stderr: string }) => /\[(AIRLOCK_[A-Z_]+)\]\s*$/.exec(r.stderr.trim())?.[1];

function fetchIn(mode: string, timeoutMs = 30_000, extra: string[] = []): Promise<RunResult> {
  return airlockAsync(['fetch', '--domain', 'docs.example.com', '--api-url', `${base}/m/${mode}`, '--out', join(dir, mode), ...extra], { env: ENV, timeoutMs });
}

describe('agent-job --wait against a service that never answers', () => {
  it('a request in flight is given up at --timeout too: exit 1 AIRLOCK_TIMEOUT, for silence and for a trickle', async () => {
    for (const mode of ['never_respond', 'trickle']) {
      const t0 = performance.now();
      const r = await airlockAsync(['agent-job', 'p1', 'j1', '--wait', '--timeout', '2', '--api-url', `${base}/m/${mode}`], { env: ENV, timeoutMs: 25_000 });
      expect(r.signal, r.stderr).toBeNull();
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/agent job j1 had no answer from the service after 2000 ms \[AIRLOCK_TIMEOUT\]/);
      expect(performance.now() - t0, mode).toBeLessThan(15_000); // the per-request bound alone is 30 s
    }
  }, 40_000);
});

describe('fetch against a hostile export API', () => {
  it('an endless bundle body (no Content-Length, sizeBytes 303) is refused as soon as it outgrows 303 bytes, and the part is removed', async () => {
    const t0 = performance.now();
    const r = await fetchIn('endless_bundle');
    expect(r.signal, r.stderr).toBeNull();
    expect(r.status, r.stderr).toBe(4);
    expect(codeOf(r), r.stderr).toBe('AIRLOCK_SIZE_MISMATCH');
    expect(r.stderr).toMatch(/more than the 303 bytes announced \(sizeBytes\)/);
    expect(r.stderr).not.toContain('secret-signature');
    expect(performance.now() - t0).toBeLessThan(15_000);
    const left = existsSync(join(dir, 'endless_bundle')) ? await readdir(join(dir, 'endless_bundle')) : [];
    expect(left.filter((f) => f.includes('.part'))).toEqual([]);
  }, 35_000);

  it('sizeBytes 1e18 (above 2^53 and the archive size limit) is refused before any byte is downloaded: exit 4 AIRLOCK_TOO_LARGE', async () => {
    const r = await fetchIn('huge_size');
    expect(r.status, r.stderr).toBe(4);
    expect(codeOf(r), r.stderr).toBe('AIRLOCK_TOO_LARGE');
    expect(r.stderr).toMatch(
      /announced 1000000000000000000 bytes \(sizeBytes\) for the archive, more than the \d+ allowed \(the archive size limit\); nothing was downloaded/,
    );
    expect(objectGets.get('huge_size') ?? 0).toBe(0);
  }, 35_000);

  it('a sizeBytes no download can have (302.5) is refused before any byte is downloaded: exit 4 AIRLOCK_SIZE_MISMATCH, never ignored', async () => {
    const r = await fetchIn('fraction_size');
    expect(r.status, r.stderr).toBe(4);
    expect(codeOf(r), r.stderr).toBe('AIRLOCK_SIZE_MISMATCH');
    expect(r.stderr).toMatch(/announced 302\.5 bytes \(sizeBytes\) for the archive, which no download can have; nothing was downloaded/);
    expect(objectGets.get('fraction_size') ?? 0).toBe(0);
  }, 35_000);

  it('a sizeBytes that is not a number ("303", [303]) is refused as a broken answer before any byte is downloaded: exit 1 AIRLOCK_UPSTREAM_SCHEMA naming the field', async () => {
    for (const mode of ['string_size', 'array_size']) {
      const r = await fetchIn(mode);
      expect(r.status, r.stderr).toBe(1);
      expect(codeOf(r), r.stderr).toBe('AIRLOCK_UPSTREAM_SCHEMA');
      expect(r.stderr).toMatch(/sizeBytes/);
      expect(objectGets.get(mode) ?? 0).toBe(0);
    }
  }, 35_000);

  it('a job answer naming "status" twice (JSON.parse keeps the last) is refused: exit 1 AIRLOCK_UPSTREAM_SCHEMA naming the key', async () => {
    const r = await fetchIn('dup_status');
    expect(r.status, r.stderr).toBe(1);
    expect(codeOf(r), r.stderr).toBe('AIRLOCK_UPSTREAM_SCHEMA');
    expect(r.stderr).toMatch(/names the key "status" twice/);
  }, 35_000);

  it('AIRLOCK_API_URL with another scheme (javascript:) is exit 2 quoting the URL escaped, never "null"', async () => {
    const r = await airlockAsync(['fetch', '--domain', 'docs.example.com', '--out', join(dir, 'scheme')], {
      env: { ...ENV, AIRLOCK_API_URL: 'javascript:alert(1)\u001b[2J' },
      timeoutMs: 30_000,
    });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('API URL must be http(s): "javascript:alert(1)\\u001b[2J"');
    expect(r.stderr).not.toContain('null');
  }, 35_000);

  it('SIGTERM while the answer to POST /v1/static-export/jobs never comes: prompt exit 1 AIRLOCK_INTERRUPTED, no retry', async () => {
    const arrived = new Promise<void>((r) => posted.set('never_respond', r));
    let posts = 0;
    const counted = () => {
      posts++;
    };
    server.on('request', counted);
    const c = startAirlock(['fetch', '--domain', 'docs.example.com', '--api-url', `${base}/m/never_respond`, '--out', join(dir, 'never')], {
      env: ENV,
      stdio: 'pipe',
    });
    await arrived;
    const t0 = performance.now();
    c.kill('SIGTERM');
    const { code: status, signal } = await c.exit(25_000);
    const r = { status, signal };
    const stderr = c.stderr();
    const ms = performance.now() - t0;
    server.off('request', counted);
    expect(r.signal, stderr).toBeNull();
    expect(r.status, stderr).toBe(1);
    expect(codeOf({ stderr }), stderr).toBe('AIRLOCK_INTERRUPTED');
    expect(stderr).toMatch(/interrupted/);
    expect(ms, stderr).toBeLessThan(3_000);
    expect(posts, 'no request after the signal').toBe(1);
  }, 35_000);

  it('a bundle download that stalls (50 of 303 bytes, then silence) ends under the minimum rate (1 KiB/s over --rate-window 1.5 s; 30 s by default), the part kept', async () => {
    const t0 = performance.now();
    const r = await fetchIn('stall_bundle', 30_000, ['--rate-window', '1.5']);
    expect(r.signal, r.stderr).toBeNull();
    expect(r.status, r.stderr).toBe(1);
    expect(codeOf(r), r.stderr).toBe('AIRLOCK_DOWNLOAD_TOO_SLOW');
    expect(r.stderr).toMatch(
      /the bundle download from http:\/\/127\.0\.0\.1:\d+ went under 1 KiB\/s for 1\.5 s \(50 bytes came in that time\); gave up \(--rate-window\)/,
    );
    expect(r.stderr).not.toContain('secret-signature');
    expect(performance.now() - t0).toBeLessThan(20_000);
    expect((await readdir(join(dir, 'stall_bundle'))).filter((f) => f.endsWith('.bundle.part'))).toHaveLength(1);
    // Without the option, the same watchdog uses the documented defaults (1 KiB/s over every 30 s).
    expect(resolveDownloadLimits(undefined)).toMatchObject({ minBytesPerSecond: 1024, rateWindowMs: 30_000 });
  }, 35_000);

  it('--rate-window out of its range (0.1 to 3600 seconds) is a usage error before any request', async () => {
    const r = await fetchIn('stall_bundle_range', 30_000, ['--rate-window', '0']);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('--rate-window takes a number of seconds from 0.1 to 3600, not "0"');
    expect(existsSync(join(dir, 'stall_bundle_range'))).toBe(false);
  }, 35_000);

  it('an unknown job status in the 202 answer to POST /jobs is refused as the poll refuses it: exit 1 AIRLOCK_UPSTREAM_SCHEMA naming status', async () => {
    const r = await fetchIn('status_bad');
    expect(r.status, r.stderr).toBe(1);
    expect(codeOf(r), r.stderr).toBe('AIRLOCK_UPSTREAM_SCHEMA');
    expect(r.stderr).toMatch(/POST \/v1\/static-export\/jobs: unexpected response: .*status/);
    expect(r.stderr).not.toMatch(/\x1b/); // eslint-disable-line no-control-regex -- the point
    expect(r.stderr).not.toMatch(/export completed|download/);
  }, 35_000);

  it("a job that fails with ESC and U+202E in the service's error: exit 3, both shown escaped (\\x1b, \\u202e), never raw", async () => {
    const r = await fetchIn('failed_esc');
    expect(r.status, r.stderr).toBe(3);
    expect(codeOf(r), r.stderr).toBe('AIRLOCK_JOB_FAILED');
    expect(r.stderr).toContain('export job j1 failed upstream: disk\\x1b[2J full \\u202e evil');
    expect(r.stderr).not.toMatch(/[\x1b\u202e]/); // eslint-disable-line no-control-regex -- the point
  }, 35_000);
});
