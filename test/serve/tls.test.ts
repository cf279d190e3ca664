import { until as waitUntil } from '../helpers/wait.js';
import { describe, it, expect, afterEach } from 'vitest';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { connect, type ClientHttp2Session } from 'node:http2';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { createAirlockServer, loadTlsPair, type AirlockServer } from '../../src/serve/index.js';
import { cleanup, setActive, tempRoot, writeVersion } from './helpers.js';
import { mutants } from '../helpers/mutate.js';
import { makeCert } from '../helpers/tls.js';

/** serve --tls-cert/--tls-key: HTTP/2 with HTTP/1.1 by ALPN; certificates reloaded without dropping connections. */
let root: string | undefined;
let srv: AirlockServer | undefined;
const sessions: ClientHttp2Session[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.destroy();
  await srv?.close(100);
  if (root) await cleanup(root);
  srv = undefined;
  root = undefined;
});

/** The certificate a new handshake is given (its CN). */
function peerName(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => {
      const c = s.getPeerX509Certificate();
      s.destroy();
      resolve(c ? new X509Certificate(c.raw).subject.replace(/^CN=/, '') : '');
    });
    s.on('error', reject);
  });
}

function h2get(session: ClientHttp2Session, path: string): Promise<{ status: number; body: string; version: string }> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':path': path });
    let body = '';
    let status = 0;
    let version = '';
    req.on('response', (h) => {
      status = Number(h[':status']);
      version = String(h['x-airlock-version']);
    });
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => resolve({ status, body, version }));
    req.on('error', reject);
    req.end();
  });
}

/** Whether `cond` came true within `limitMs` (the tests' one bounded wait). */
const until = (cond: () => Promise<boolean>, limitMs: number): Promise<boolean> =>
  waitUntil(async () => (await cond()) || null, { timeoutMs: limitMs, intervalMs: 50 }).then(
    () => true,
    () => false,
  );

/** A folder laid out as Kubernetes mounts a Secret: tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>/. */
async function secretVolume(dir: string, pair: { cert: string; key: string }, gen: number): Promise<void> {
  const g = join(dir, `..gen${gen}`);
  await mkdir(g);
  await writeFile(join(g, 'tls.crt'), await readFile(pair.cert));
  await writeFile(join(g, 'tls.key'), await readFile(pair.key));
  await symlink(`..gen${gen}`, join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data')); // the atomic swap
  if (gen === 1) {
    await symlink('..data/tls.crt', join(dir, 'tls.crt'));
    await symlink('..data/tls.key', join(dir, 'tls.key'));
  }
}

async function setup(logs: string[], o: { logBeside?: boolean } = {}) {
  root = await tempRoot('airlock-tls-');
  const store = join(root, 'store');
  await writeVersion(store, 'v1', { 'index.html': '<h1>v1</h1>', 'a.css': 'x' });
  await setActive(store, 'v1');
  const a = makeCert(root, 'first');
  const b = makeCert(root, 'second');
  const vol = join(root, 'secret');
  await mkdir(vol);
  await secretVolume(vol, a, 1);
  const files = { cert: join(vol, 'tls.crt'), key: join(vol, 'tls.key') };
  // logBeside: the log is also written into the certificate's folder, as `2> secret/err.log` would.
  const log = (l: string) => {
    logs.push(l);
    if (o.logBeside) appendFileSync(join(vol, 'err.log'), l + '\n');
  };
  srv = await createAirlockServer({ store, lease: false, log, tls: { pair: await loadTlsPair(files), files } });
  const url = await srv.listen(0);
  return { url, port: Number(new URL(url).port), vol, a, b, files };
}

describe('TLS', () => {
  it('HTTP/2 by ALPN, HTTP/1.1 for a client that offers only it', async () => {
    const { url } = await setup([]);
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);
    const s = connect(url, { rejectUnauthorized: false });
    sessions.push(s);
    const r = await h2get(s, '/index.html');
    expect([r.status, r.body, r.version]).toEqual([200, '<h1>v1</h1>', 'v1']);
    expect(s.alpnProtocol).toBe('h2');
    const h1 = await new Promise<{ status: number; version: string; body: string }>((resolve, reject) => {
      request(url + 'a.css', { rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] } as object, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, version: res.httpVersion, body }));
      })
        .on('error', reject)
        .end();
    });
    expect(h1).toEqual({ status: 200, version: '1.1', body: 'x' });
    expect((await h2get(s, '/nope')).status).toBe(404);
    expect((await h2get(s, '/_airlock/health')).status).toBe(200);
  });

  it('a Secret-style symlink swap reloads the certificate; an open HTTP/2 connection keeps working', async () => {
    const logs: string[] = [];
    const { url, port, vol, b } = await setup(logs);
    expect(await peerName(port)).toBe('first');
    const s = connect(url, { rejectUnauthorized: false });
    sessions.push(s);
    expect((await h2get(s, '/index.html')).status).toBe(200);
    await secretVolume(vol, b, 2);
    expect(await until(async () => (await peerName(port)) === 'second', 5000)).toBe(true);
    expect((await h2get(s, '/index.html')).status).toBe(200); // the connection from before the reload
    expect(s.destroyed).toBe(false);
    expect(logs.some((l) => /TLS certificate reloaded/.test(l))).toBe(true);
  });

  it("a log written into the certificate folder, or any unrelated file there, reloads nothing: only the pair's own files do", async () => {
    const logs: string[] = [];
    const { port, vol, b } = await setup(logs, { logBeside: true });
    const reloads = () => logs.filter((l) => /TLS certificate reloaded/.test(l)).length;
    await secretVolume(vol, b, 2);
    expect(await until(async () => (await peerName(port)) === 'second', 5000)).toBe(true);
    expect(await until(async () => reloads() === 1, 5000)).toBe(true);
    await writeFile(join(vol, 'notes.txt'), 'unrelated');
    // Five debounce periods: a reload that fed on its own log line, or on notes.txt, would show here.
    expect(await until(async () => reloads() > 1, 1000)).toBe(false);
    expect(logs.filter((l) => !/TLS certificate reloaded/.test(l))).toEqual([]);
  });

  it('a garbage replacement is refused: the old certificate stays, the error is logged loudly (watch and SIGHUP)', async () => {
    const logs: string[] = [];
    const { port, vol, files } = await setup(logs);
    const bad = join(vol, '..gen9');
    await mkdir(bad);
    await writeFile(join(bad, 'tls.crt'), '-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n');
    await writeFile(join(bad, 'tls.key'), await readFile(files.key));
    await symlink('..gen9', join(vol, '..data_tmp'));
    await rename(join(vol, '..data_tmp'), join(vol, '..data'));
    expect(await until(async () => logs.some((l) => /TLS CERTIFICATE NOT RELOADED/.test(l)), 5000)).toBe(true);
    expect(await srv!.reloadTls()).toBe(false);
    expect(await peerName(port)).toBe('first');
    // A key of another certificate is refused just the same.
    const other = makeCert(root!, 'third');
    await writeFile(join(bad, 'tls.crt'), await readFile(other.cert));
    expect(await srv!.reloadTls()).toBe(false);
    expect(await peerName(port)).toBe('first');
    // So is a key of another type (Ed25519 beside an EC certificate), which OpenSSL itself would load.
    await writeFile(join(bad, 'tls.crt'), await readFile(join(vol, '..gen1', 'tls.crt')));
    execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', join(bad, 'tls.key')], { stdio: 'ignore' });
    logs.length = 0;
    expect(await srv!.reloadTls()).toBe(false);
    expect(logs.join('\n')).toMatch(/TLS CERTIFICATE NOT RELOADED.*TLS key .*tls\.key does not belong to certificate/);
    expect(await peerName(port)).toBe('first');
    await expect(loadTlsPair({ cert: join(bad, 'tls.crt'), key: files.key })).rejects.toThrow(/does not belong to certificate/);
  });

  it('mutated certificate files (bounded fuzz): a reload loads or is refused, never throws; refused keeps the served pair', async () => {
    const logs: string[] = [];
    const { port, files, a } = await setup(logs);
    const good = await readFile(a.cert);
    const target = await readFile(files.cert).then(() => join(root!, 'secret', '..gen1', 'tls.crt'));
    let refused = 0;
    for (const m of mutants(good, 40, 0x7150)) {
      await writeFile(target, m.bytes);
      const ok = await srv!.reloadTls();
      if (!ok) {
        refused++;
        expect(await peerName(port), `mutant ${m.index} (${m.mutation})`).toBe('first');
      }
    }
    expect(refused).toBeGreaterThan(10);
    await writeFile(target, Buffer.alloc(2 * 1024 * 1024, 0x41)); // over the size bound
    expect(await srv!.reloadTls()).toBe(false);
    expect(logs.some((l) => /more than the limit of 1048576/.test(l))).toBe(true);
  });
});
