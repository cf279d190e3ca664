import { describe, it, expect, afterAll, beforeAll } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pollMirror } from '../../src/fleet/poll.js';
import type { FleetAnswer } from '../../src/mirror/index.js';

/** One mirror whose next answer each test sets; it records what the replica sent. */
let answer: { status: number; headers?: Record<string, string>; body: Buffer | string } = { status: 200, body: '' };
let seen: { url?: string; method?: string; headers?: IncomingHttpHeaders; body?: string } = {};
let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen = { url: req.url, method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() };
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
);

const report = { replica: 'r1', serving: 'v1', prepared: null, refused: null };
const valid: FleetAnswer = {
  version: 'v2',
  packageSha256: 'a'.repeat(64),
  packageUrl: 'http://127.0.0.1:1/p',
  phase: 'preparing',
  activateInMs: null,
  activateAt: null,
  held: null,
  replicas: 1,
  prepared: 0,
};
const poll = () => pollMirror(base, 'tok', report, new AbortController().signal);

describe('pollMirror', () => {
  it('POSTs the report with the bearer token and returns a well-formed answer', async () => {
    answer = { status: 200, body: JSON.stringify(valid) };
    expect(await poll()).toEqual(valid);
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/_airlock/fleet/poll');
    expect(seen.headers?.authorization).toBe('Bearer tok');
    expect(JSON.parse(seen.body ?? '')).toEqual(report);
  });

  it('a hostile mirror is refused, naming what was wrong', async () => {
    const cases: Array<[typeof answer, RegExp]> = [
      // A text body is not echoed (any bytes at all); the mirror's JSON {error} is, sanitised.
      [{ status: 503, body: 'draining\x1b[2J' }, /HTTP 503 from .*\/_airlock\/fleet\/poll$/],
      [{ status: 503, body: JSON.stringify({ error: 'draining' }) }, /HTTP 503 from .*\/_airlock\/fleet\/poll: draining$/],
      [{ status: 200, body: '{"version":' }, /not JSON/],
      [{ status: 200, body: JSON.stringify({ ...valid, phase: 'explode' }) }, /malformed: phase/],
      [{ status: 200, body: JSON.stringify({ ...valid, packageSha256: 'zz' }) }, /malformed: packageSha256/],
      [{ status: 200, body: JSON.stringify({ ...valid, packageUrl: 'file:///etc/passwd' }) }, /malformed: packageUrl: must be an http\(s\) URL/],
      // Declared too big: refused before reading. Streamed too big (chunked, no length): refused past the bound.
      [{ status: 200, headers: { 'content-length': String(10 * 1024 * 1024) }, body: '' }, /is 10485760 bytes; at most 65536/],
      [{ status: 200, headers: { 'transfer-encoding': 'chunked' }, body: Buffer.alloc(200_000, 0x20) }, /over 65536 bytes/],
    ];
    for (const [a, re] of cases) {
      answer = a;
      await expect(poll(), re.source).rejects.toThrow(re);
    }
  });

  it('stops when the follower stops (abort)', async () => {
    answer = { status: 200, body: JSON.stringify(valid) };
    const ac = new AbortController();
    ac.abort();
    await expect(pollMirror(base, 'tok', report, ac.signal)).rejects.toThrow(/abort/i);
  });
});
