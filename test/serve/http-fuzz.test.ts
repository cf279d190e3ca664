import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mutants } from '../helpers/mutate.js';
import { createRng } from '../../fixtures/prng.js';
import { startAirlock, type Proc } from '../helpers/proc.js';
import { cleanup, labelledSite, setActive, tempRoot, writeVersion } from './helpers.js';
import { until } from '../helpers/wait.js';

/**
 * Seeded mutation fuzz of raw HTTP/1.1 requests (request line, headers, paths) against the built
 * `serve` over a socket on 127.0.0.1: every answer is well-formed HTTP with a 2xx/3xx/4xx status,
 * no request hangs, the process never crashes, and no byte of a file outside the site (the
 * store's own files, a secret beside the store) is ever sent.
 */
const SECRET = 'OUTSIDE-THE-SITE-7f3a9c';
const SEEDS = [
  'GET /guide/intro HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: br, gzip\r\nRange: bytes=0-10\r\nIf-None-Match: "abc"\r\n\r\n',
  'GET /guide/?q=1&r=%zz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n',
  'HEAD /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-Modified-Since: Mon, 01 Jan 2024 00:00:00 GMT\r\n\r\n',
  'GET /%2e%2e/%2e%2e/secret.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
  'GET /../../version.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
  'GET /_airlock/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n',
  'POST /_airlock/features HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello',
  'GET /404-page HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=5-2,0-0\r\nAccept-Encoding: gzip;q=0, identity\r\n\r\n',
];
/** Path tricks spliced into the request target of a seed. */
const TARGETS = [
  '/..',
  '/../airlock.json',
  '/%2e%2e%2fversion.json',
  '/guide/..%2f..%2f..%2fsecret.txt',
  '/guide%5c..%5cindex.html',
  '//etc/passwd',
  '/%00',
  '/index.html%00.txt',
  '/.state.json',
  '/versions/v1/version.json',
  '/' + 'a/'.repeat(3000),
  '/%',
  '/%ff%fe',
  '/guide/intro/',
  '/_airlock/../guide/intro',
  '/_airlock/%2e%2e/state.json',
  'http://evil.example/guide/intro',
  '*',
  '/?' + 'q'.repeat(9000),
  '/\u00e9t\u00e9',
];

let root: string;
let proc: Proc;
let port: number;

beforeAll(async () => {
  root = await tempRoot('airlock-http-fuzz-');
  const store = join(root, 'store');
  await writeVersion(store, 'v1', labelledSite('v1'));
  await setActive(store, 'v1');
  await writeFile(join(root, 'secret.txt'), SECRET);
  await writeFile(join(store, 'secret.txt'), SECRET);
  proc = startAirlock(['serve', '--store', store, '--port', '0']);
  port = Number((await proc.waitFor(/^http:\/\/127\.0\.0\.1:(\d+)\//m))[1]);
  // The pages are transformed in the background after the server listens; the fuzz's clients
  // give up after 300 ms of silence, so wait for that build (a first page can take longer).
  await until(() => /transformed \d+ HTML page/.test(proc.stderr()), { timeoutMs: 20_000, intervalMs: 10 }).catch(() => undefined);
}, 30_000);
afterAll(async () => {
  proc?.kill('SIGTERM');
  expect((await proc.exit()).code).toBe(0);
  await cleanup(root);
});

/** Whether `data` holds one complete response (enough to judge it; the connection may stay open). */
function complete(data: Buffer, head: boolean): boolean {
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return false;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(lines[0]!.split(' ')[1]);
  if (head || status === 204 || status === 304 || (status >= 100 && status < 200)) return true;
  const field = (name: string) =>
    lines
      .find((l) => l.toLowerCase().startsWith(name + ':'))
      ?.slice(name.length + 1)
      .trim();
  const length = field('content-length');
  if (length !== undefined) return data.length >= end + 4 + Number(length);
  if (field('transfer-encoding')?.toLowerCase() === 'chunked') return data.includes('\r\n0\r\n\r\n', end);
  return false; // read to close
}

/**
 * Send the bytes and read one answer: done when it is complete or the server closes. A request
 * the server is still waiting on (a truncated head or body) gets EOF after 300 ms of silence, as a
 * client that gave up; then the server must close within 5 s (else: a hang).
 */
function exchange(bytes: Buffer, timeoutMs = 5000): Promise<{ data: Buffer; hung: boolean }> {
  const head = bytes.subarray(0, 5).toString('latin1') === 'HEAD ';
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (hung: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(hard);
      clearTimeout(quiet);
      sock.destroy();
      resolve({ data: Buffer.concat(chunks), hung });
    };
    const hard = setTimeout(() => finish(true), timeoutMs);
    const quiet = setTimeout(() => sock.end(), 300);
    sock.on('data', (c) => {
      chunks.push(c);
      clearTimeout(quiet);
      if (complete(Buffer.concat(chunks), head)) finish(false);
    });
    sock.on('error', () => {});
    sock.on('close', () => finish(false));
    sock.write(bytes);
  });
}

function check(what: string, r: { data: Buffer; hung: boolean }, mustAnswer: boolean): void {
  expect(r.hung, `${what}: no close within 5 s`).toBe(false);
  const text = r.data.toString('latin1');
  if (mustAnswer) expect(text.length, `${what}: no answer`).toBeGreaterThan(0);
  if (text.length > 0) expect(text, what).toMatch(/^HTTP\/1\.1 [234]\d\d [^\r\n]*\r\n/);
  expect(text, what).not.toMatch(/(^|\r\n)HTTP\/1\.1 5\d\d /);
  expect(text, what).not.toContain(SECRET);
  expect(text, what).not.toContain('airlock-package/1'); // the store's airlock.json
  expect(text, what).not.toContain('packageSha256'); // the store's version.json
}

const alive = async () => {
  expect(proc.child.exitCode, proc.stderr()).toBeNull();
  const r = await exchange(Buffer.from('GET /_airlock/health HTTP/1.1\r\nHost: x\r\n\r\n'));
  expect(r.data.toString('latin1')).toMatch(/^HTTP\/1\.1 200 /);
};

describe('serve: raw HTTP request fuzz (through the binary)', () => {
  it('the seeds and every path trick: a well-formed 2xx-4xx answer, nothing from outside the site', async () => {
    for (const s of SEEDS) check(JSON.stringify(s), await exchange(Buffer.from(s)), true);
    for (const seed of SEEDS.slice(0, 3)) {
      for (const t of TARGETS) {
        const req = seed.replace(/^(\S+) \S+/, `$1 ${t}`);
        check(`${t} in ${JSON.stringify(seed.slice(0, 24))}`, await exchange(Buffer.from(req, 'utf8')), true);
      }
    }
    await alive();
  }, 60_000);

  it('2,400 byte mutants of the seeds, 16 at a time: never a 5xx, a hang, a crash or a byte from outside the site', async () => {
    const rng = createRng(0x4177);
    const cases: Array<{ what: string; bytes: Buffer }> = [];
    for (const [i, s] of SEEDS.entries()) {
      for (const m of mutants(Buffer.from(s), 300, 0x1200 + i)) {
        // Complete the head of a truncated mutant now and then, so more of them reach the router.
        const bytes = rng.int(0, 3) === 0 && !m.bytes.includes('\r\n\r\n') ? Buffer.concat([m.bytes, Buffer.from('\r\n\r\n')]) : m.bytes;
        cases.push({ what: `seed ${i} mutant ${m.index} (${m.mutation} at ${m.at}): ${JSON.stringify(bytes.toString('latin1').slice(0, 120))}`, bytes });
      }
    }
    const statuses: Record<string, number> = {};
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++]!;
        const r = await exchange(c.bytes);
        check(c.what, r, false);
        const status = r.data.length ? r.data.toString('latin1').split(' ')[1]! : 'none';
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (next % 300 === 0) await alive();
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    await alive();
    // The mutants did reach the server's answers, not only its parser's refusals.
    expect(Object.keys(statuses).filter((k) => /^[23]/.test(k)).length, JSON.stringify(statuses)).toBeGreaterThan(1);
    expect(statuses['none'] ?? 0, JSON.stringify(statuses)).toBeLessThan(cases.length / 2);
  }, 60_000);
});
