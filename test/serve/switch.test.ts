import { describe, it, expect, afterEach } from 'vitest';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { cleanup, get, labelledSite, setActive, tempRoot, writeVersion } from './helpers.js';

let root: string | undefined;
let srv: AirlockServer | undefined;
afterEach(async () => {
  await srv?.close();
  if (root) await cleanup(root);
  srv = undefined;
  root = undefined;
});

async function twoVersions() {
  root = await tempRoot('airlock-switch-');
  const store = join(root, 'store');
  await writeVersion(store, 'v1', labelledSite('v1'));
  await writeVersion(store, 'v2', labelledSite('v2'));
  await setActive(store, 'v1');
  return store;
}

/** Poll until the server answers with `label`; returns the delay in ms (bounded). */
async function waitForVersion(base: string, label: string, limitMs = 3000): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < limitMs) {
    const r = await get(base + '/_airlock/health');
    if (r.headers['x-airlock-version'] === label) return Date.now() - t0;
    await new Promise((res) => setTimeout(res, 20));
  }
  return Infinity;
}

describe('hot switching', () => {
  it('holds a lease on the served version, moves it on a switch, releases it on close', async () => {
    const store = await twoVersions();
    srv = await createAirlockServer({ store });
    const base = (await srv.listen(0)).slice(0, -1);
    const lease = join(store, 'leases', `${process.pid}.json`);
    expect(JSON.parse(await readFile(lease, 'utf8')).version).toBe('v1');
    await setActive(store, 'v2');
    expect(await waitForVersion(base, 'v2')).toBeLessThan(1000);
    expect(JSON.parse(await readFile(lease, 'utf8')).version).toBe('v2');
    await srv.close();
    srv = undefined;
    expect(existsSync(lease)).toBe(false);
  });

  it('an activation is served within 1 s; a pinned server ignores it', async () => {
    const store = await twoVersions();
    srv = await createAirlockServer({ store });
    const pinned = await createAirlockServer({ store, version: 'v1', lease: false }); // one lease file per pid: the other server owns it
    try {
      const base = (await srv.listen(0)).slice(0, -1);
      const pbase = (await pinned.listen(0)).slice(0, -1);
      await setActive(store, 'v2');
      expect(await waitForVersion(base, 'v2')).toBeLessThan(1000);
      expect((await get(base + '/')).body.toString()).toContain('version=v2');
      expect((await get(pbase + '/')).headers['x-airlock-version']).toBe('v1');
    } finally {
      await pinned.close();
    }
  });

  it('a broken version in state.json is refused and the server keeps serving the old one', async () => {
    const store = await twoVersions();
    const logs: string[] = [];
    srv = await createAirlockServer({ store, log: (l) => logs.push(l) });
    const base = (await srv.listen(0)).slice(0, -1);
    await setActive(store, 'v9-missing');
    await srv.recheck();
    expect((await get(base + '/')).headers['x-airlock-version']).toBe('v1');
    expect(logs.join('\n')).toContain('v9-missing');
  });

  it('8 concurrent clients while switching back and forth: zero errors, no mixed response, each switch seen in < 1 s', async () => {
    const store = await twoVersions();
    srv = await createAirlockServer({ store });
    const base = (await srv.listen(0)).slice(0, -1);
    const seconds = Number(process.env.AIRLOCK_SWITCH_SECONDS ?? 15);
    const deadline = Date.now() + seconds * 1000;
    let ok = 0;
    const errors: string[] = [];
    const paths = ['/', '/guide/intro', '/guide/', '/missing'];
    const client = async (n: number) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let i = 0; Date.now() < deadline; i++) {
          const path = paths[(i + n) % paths.length]!;
          const r = await new Promise<{ status: number; version: string; body: string }>((resolve, reject) => {
            const req = request(base + path, { agent }, (res) => {
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (body += c));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, version: String(res.headers['x-airlock-version']), body }));
            });
            req.setTimeout(5000, () => req.destroy(new Error('timeout')));
            req.on('error', reject);
            req.end();
          }).catch((e: Error) => ({ status: -1, version: '', body: e.message }));
          const want = path === '/missing' ? 404 : 200;
          if (r.status !== want) errors.push(`${path}: status ${r.status} ${r.body}`);
          else if (!r.body.includes(`version=${r.version}`)) errors.push(`${path}: mixed response, header ${r.version}, body ${r.body}`);
          else ok++;
        }
      } finally {
        agent.destroy();
      }
    };
    const switcher = async () => {
      const delays: number[] = [];
      for (let i = 0; Date.now() < deadline - 1500; i++) {
        const label = i % 2 === 0 ? 'v2' : 'v1';
        await setActive(store, label);
        delays.push(await waitForVersion(base, label));
        await new Promise((res) => setTimeout(res, 200));
      }
      return delays;
    };
    const [delays] = await Promise.all([switcher(), ...Array.from({ length: 8 }, (_, n) => client(n))]);
    expect(errors.slice(0, 5)).toEqual([]);
    expect(ok).toBeGreaterThan(100);
    expect(delays.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...delays)).toBeLessThan(1000);
  }, 60_000);
});
