import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { startAirlock, type Proc } from '../helpers/proc.js';
import { makePackage } from '../helpers/make-package.js';
import { tokensFile } from '../mirror/helpers.js';
import { startEmulator } from '../../src/emulator/index.js';
import { startBootstrap } from '../../src/start/bootstrap.js';
import { cleanup, labelledSite, rawRequest, setActive, tempRoot, writeVersion } from './helpers.js';

/**
 * Serving rules: GET and HEAD; other methods get 405 with `Allow`. Under
 * /_airlock/ hono used to answer 404, and CONNECT had its connection closed without a word.
 * Checked on every server airlock runs: serve (static files, /_airlock/, mirror and relay routes),
 * preview, the values-file bootstrap listener and (CONNECT only: its API keeps its own rules) the
 * emulator.
 */
const TOKEN = 'svc_mirror_test_' + 'm'.repeat(24);
let root: string;
let serve: Proc;
let preview: Proc;
let servePort: number;
let previewPort: number;

const portOf = async (p: Proc) => Number((await p.waitFor(/^http:\/\/127\.0\.0\.1:(\d+)\//m))[1]);
const req = (port: number, method: string, target: string, extra = '') =>
  rawRequest(port, `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}Content-Length: 0\r\n\r\n`);

beforeAll(async () => {
  root = await tempRoot('airlock-methods-');
  const store = join(root, 'store');
  await writeVersion(store, 'v1', labelledSite('v1'));
  await setActive(store, 'v1');
  const tokens = await tokensFile(join(root, 'tokens'), [TOKEN]);
  serve = startAirlock(
    ['serve', '--store', store, '--port', '0', '--deployment', 'cloud', '--assistant-url', 'http://127.0.0.1:9', '--mirror', '--mirror-tokens', tokens],
    { env: { AIRLOCK_ASSISTANT_KEY: 'svc_dsc_' + 'a'.repeat(32) } },
  );
  const { pkgPath } = await makePackage({ outDir: join(root, 'pkg') });
  preview = startAirlock(['preview', pkgPath, '--port', '0']);
  [servePort, previewPort] = await Promise.all([portOf(serve), portOf(preview)]);
}, 60_000);
afterAll(async () => {
  serve?.kill('SIGTERM');
  preview?.kill('SIGTERM');
  await Promise.all([serve?.exit(), preview?.exit()]);
  await cleanup(root);
});

const OTHER = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

describe('405 with Allow (through the binary)', () => {
  it('serve and preview: static paths and every /_airlock/ path, known or not', async () => {
    for (const port of [servePort, previewPort]) {
      for (const path of ['/', '/guide/intro', '/nope', '/_airlock/health', '/_airlock/features', '/_airlock/version', '/_airlock/nope']) {
        for (const method of OTHER) {
          const r = await req(port, method, path);
          expect(r.status, `${method} ${path}`).toBe(405);
          expect(r.headers.allow, `${method} ${path}`).toBe('GET, HEAD');
          expect(r.body.length).toBeGreaterThan(0);
        }
      }
      expect((await req(port, 'HEAD', '/_airlock/health')).status).toBe(200);
      expect((await req(port, 'GET', '/_airlock/nope')).status).toBe(404);
    }
    expect((await req(servePort, 'POST', '/_airlock/ready')).headers.allow).toBe('GET, HEAD');
  });

  it('mirror and relay routes: a known path with another method lists the methods it answers', async () => {
    const auth = `Authorization: Bearer ${TOKEN}\r\n`;
    const jobs = await req(servePort, 'GET', '/v1/static-export/jobs', auth);
    expect(jobs.status).toBe(405);
    expect(jobs.headers.allow).toBe('POST');
    const job = await req(servePort, 'DELETE', '/v1/static-export/jobs/se_0123456789abcdef', auth);
    expect(job.status).toBe(405);
    expect(job.headers.allow).toBe('GET, HEAD');
    const bundle = await req(servePort, 'GET', '/v1/static-export/jobs/se_0123456789abcdef/bundle', auth);
    expect(bundle.headers.allow).toBe('POST');
    const message = await req(servePort, 'GET', '/discovery/v2/assistant/docs.example.com/message');
    expect(message.status).toBe(405);
    expect(message.headers.allow).toBe('POST');
    const search = await req(servePort, 'DELETE', '/discovery/v2/search/docs.example.com');
    expect(search.status).toBe(405);
    expect(search.headers.allow).toBe('GET, HEAD, POST');
  });
});

describe('CONNECT gets an answer, not a closed connection', () => {
  const connect = (port: number) => rawRequest(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');

  it('serve and preview: 405, Allow, a body, then close', async () => {
    for (const port of [servePort, previewPort]) {
      const r = await connect(port);
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
      expect(r.body.toString()).toContain('not a proxy');
      expect(Number(r.headers['content-length'])).toBe(r.body.length);
      // and the server is still there
      expect((await req(port, 'GET', '/_airlock/health')).status).toBe(200);
    }
  });

  it('the emulator (JSON {error}) and the values-file bootstrap listener', async () => {
    const emu = await startEmulator();
    const boot = await startBootstrap(0, '127.0.0.1', () => 'downloading');
    try {
      const e = await connect(Number(new URL(emu.url).port));
      expect(e.status).toBe(405);
      expect(JSON.parse(e.body.toString())).toHaveProperty('error');
      const b = await connect(boot.port);
      expect(b.status).toBe(405);
      expect(JSON.parse(b.body.toString())).toHaveProperty('error');
      const post = await req(boot.port, 'POST', '/_airlock/health');
      expect(post.status).toBe(405);
      expect(post.headers.allow).toBe('GET, HEAD');
      expect((await req(boot.port, 'GET', '/_airlock/health')).status).toBe(200);
    } finally {
      await boot.close();
      await emu.close();
    }
  });
});
