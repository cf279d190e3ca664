import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlockAsync } from '../helpers/bin.js';

/**
 * A hostile HTTP peer on 127.0.0.1 (a raw TCP server) behind every client airlock has: the bundle
 * download of `serve --values`, the export API of `fetch`. Whatever it answers, the user gets an
 * exit code, a bracketed AIRLOCK_ code that is not AIRLOCK_INTERNAL, plain words, and none of
 * the library's text (llhttp's "does not match the HTTP/1.1 protocol", errno names, V8's JSON
 * parse message) nor the link's credential.
 */
type Mode = (c: Socket) => void;
const timers = new Set<NodeJS.Timeout>();
const MODES: Record<string, { mode: Mode; say: RegExp }> = {
  'garbage bytes': { mode: (c) => c.end('\x00\x01\x02 not http at all\r\n\r\n'), say: /did not answer with valid HTTP/ },
  '20,000 headers': {
    mode: (c) => c.end('HTTP/1.1 200 OK\r\n' + Array.from({ length: 20_000 }, (_, i) => `X-H${i}: v\r\n`).join('') + '\r\n'),
    say: /did not answer with valid HTTP \(its response headers are too large\)/,
  },
  'a control character in the status line': { mode: (c) => c.end('HTTP/1.1 200 O\rK\r\nContent-Length: 2\r\n\r\nok'), say: /did not answer with valid HTTP/ },
  'closes mid-headers': {
    mode: (c) => c.end('HTTP/1.1 200 OK\r\nContent-Le'),
    say: /the connection to 127\.0\.0\.1:\d+ was closed before the answer was complete|went under 1 KiB\/s/,
  },
  'closes mid-body': {
    mode: (c) => c.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jobId":'),
    say: /was closed before the answer was complete|ended before the length it announced|went under 1 KiB\/s/,
  },
  trickles: {
    mode: (c) => {
      c.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n');
      const t = setInterval(() => (c.destroyed ? clearInterval(t) : c.write(' ')), 50);
      timers.add(t);
      c.on('close', () => {
        clearInterval(t);
        timers.delete(t);
      });
    },
    say: /went under 1 KiB\/s|stopped for|no complete answer from 127\.0\.0\.1:\d+ within/,
  },
  'stalls (headers never come)': { mode: () => {}, say: /no response headers from 127\.0\.0\.1:\d+ within 0\.3 s|went under|no complete answer/ },
  'answers HTML where JSON is due': {
    mode: (c) => c.end('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 21\r\n\r\n<html>\x1b[31mred</html>'),
    say: /the answer is not JSON \(Content-Type text\/html, 21 bytes\)|not a tar, tar\.gz or zip archive/,
  },
};
const LIBRARY = /ECONN|Error:|undici|Unexpected token|HTTP\/1\.1 protocol|other side closed|UND_ERR|HPE_|is not valid JSON/;

let dir: string;
const servers: Server[] = [];
const urls: Record<string, string> = {};
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-hostile-'));
  for (const [name, m] of Object.entries(MODES)) {
    const s = createServer((c) => {
      c.on('error', () => {});
      c.once('data', () => m.mode(c));
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    servers.push(s);
    urls[name] = `http://127.0.0.1:${(s.address() as { port: number }).port}`;
  }
});
afterAll(async () => {
  for (const t of timers) clearInterval(t);
  for (const s of servers)
    await new Promise<void>((r) => {
      s.close(() => r());
      (s as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      setTimeout(r, 500).unref();
    });
  await rm(dir, { recursive: true, force: true });
});

function plain(r: { status: number | null; stderr: string }, say: RegExp, what: string): void {
  // 1: the exchange failed; 4: bytes came and are not an archive (HTML at a bundle link).
  expect(r.status === 1 || (r.status === 4 && /HTML/.test(what)), `${what}: exit ${r.status}: ${r.stderr}`).toBe(true);
  const code = /\[(AIRLOCK_[A-Z_]+)\]\s*$/.exec(r.stderr.trim())?.[1];
  expect(code, `${what}: ${r.stderr}`).toBeDefined();
  expect(code, what).not.toBe('AIRLOCK_INTERNAL');
  expect(r.stderr, what).not.toMatch(LIBRARY);
  expect(r.stderr, what).not.toMatch(/\x1b/); // eslint-disable-line no-control-regex -- the point
  expect(r.stderr, what).toMatch(say);
  expect(r.stderr, what).not.toContain('secret-signature');
}

describe('a hostile HTTP peer: plain words under a stable code, never AIRLOCK_INTERNAL or library text', () => {
  it.each(Object.keys(MODES))(
    'bundle download of serve --values: %s',
    async (name) => {
      const values = join(dir, `${name.replace(/\W+/g, '-')}.yaml`);
      await writeFile(
        values,
        [
          'staticExport:',
          `  bundleUrl: ${urls[name]}/bundle.tar.gz?X-Amz-Signature=secret-signature`,
          '  allowUnsigned: true',
          '  download: {headersTimeoutSeconds: 0.3, minBytesPerSecond: 1024, rateWindowSeconds: 1, timeoutSeconds: 10}',
          '',
        ].join('\n'),
      );
      const t0 = performance.now();
      const r = await airlockAsync(['serve', '--values', values, '--store', join(dir, `store-${name.replace(/\W+/g, '-')}`), '--port', '0'], {
        timeoutMs: 25_000,
      });
      plain(r, MODES[name]!.say, name);
      expect(performance.now() - t0).toBeLessThan(20_000);
    },
    30_000,
  );

  // fetch's API timeouts are not injectable (30 s per request): the peers that answer at once.
  it.each(Object.keys(MODES).filter((n) => !/trickles|stalls/.test(n)))(
    'export API of fetch: %s',
    async (name) => {
      const r = await airlockAsync(['fetch', '--domain', 'docs.example.com', '--api-url', urls[name]!, '--out', join(dir, 'out')], {
        env: { AIRLOCK_ADMIN_KEY: 'svc_hostiletestkey0123456789', AIRLOCK_ADMIN_KEY_FILE: undefined },
        timeoutMs: 60_000,
      });
      plain(r, MODES[name]!.say, name);
      expect(r.stderr).not.toContain('svc_hostiletestkey0123456789');
    },
    65_000,
  );
});
