import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { createAirlockServer } from '../../src/serve/index.js';
import { serveCaseAfterEach, get, labelledSite, setActive, tempRoot, writeVersion } from './helpers.js';

const t = serveCaseAfterEach();

async function twoVersions() {
  t.root = await tempRoot('airlock-switch-');
  const store = join(t.root, 'store');
  await writeVersion(store, 'v1', labelledSite('v1'));
  await writeVersion(store, 'v2', labelledSite('v2'));
  await setActive(store, 'v1');
  return store;
}

/**
 * Every version the server swaps in, with the time it did (onVersion). A switch is timed from the
 * activation's return to the swap, on the server: a client polling from this same event loop,
 * behind 8 busy clients, measured its own queueing as much as the switch.
 */
function swaps() {
  const seen: Array<{ label: string; at: number }> = [];
  return {
    onVersion: (idx: { version: string }) => {
      seen.push({ label: idx.version, at: Date.now() });
    },
    /** ms from `since` until a swap to `label` after the first `from` swaps (Infinity past 5 s). */
    async until(label: string, since: number, from: number): Promise<number> {
      for (let i = 0; i < 500; i++) {
        const hit = seen.slice(from).find((x) => x.label === label);
        if (hit) return hit.at - since;
        await new Promise((res) => setTimeout(res, 10));
      }
      return Infinity;
    },
    count: () => seen.length,
  };
}

/** Activate `label` and wait until the server swapped it in: the delay in ms; then a reader gets it. */
async function switchTo(store: string, base: string, sw: ReturnType<typeof swaps>, label: string): Promise<number> {
  const from = sw.count();
  await setActive(store, label);
  const delay = await sw.until(label, Date.now(), from);
  expect((await get(base + '/_airlock/health')).headers['x-airlock-version']).toBe(label);
  return delay;
}

describe('hot switching', () => {
  it('holds a lease on the served version, moves it on a switch, releases it on close', async () => {
    const store = await twoVersions();
    const sw = swaps();
    t.srv = await createAirlockServer({ store, onVersion: sw.onVersion });
    const base = (await t.srv.listen(0)).slice(0, -1);
    const lease = join(store, 'leases', `${process.pid}.json`);
    expect(JSON.parse(await readFile(lease, 'utf8')).version).toBe('v1');
    expect(await switchTo(store, base, sw, 'v2')).toBeLessThan(1000);
    expect(JSON.parse(await readFile(lease, 'utf8')).version).toBe('v2');
    await t.srv.close();
    t.srv = undefined;
    expect(existsSync(lease)).toBe(false);
  });

  it('an activation is served within 1 s; a pinned server ignores it', async () => {
    const store = await twoVersions();
    const sw = swaps();
    t.srv = await createAirlockServer({ store, onVersion: sw.onVersion });
    const pinned = await createAirlockServer({ store, version: 'v1', lease: false }); // one lease file per pid: the other server owns it
    try {
      const base = (await t.srv.listen(0)).slice(0, -1);
      const pbase = (await pinned.listen(0)).slice(0, -1);
      expect(await switchTo(store, base, sw, 'v2')).toBeLessThan(1000);
      expect((await get(base + '/')).body.toString()).toContain('version=v2');
      expect((await get(pbase + '/')).headers['x-airlock-version']).toBe('v1');
    } finally {
      await pinned.close();
    }
  });

  it('a broken version in state.json is refused and the server keeps serving the old one', async () => {
    const store = await twoVersions();
    const logs: string[] = [];
    t.srv = await createAirlockServer({ store, log: (l) => logs.push(l) });
    const base = (await t.srv.listen(0)).slice(0, -1);
    await setActive(store, 'v9-missing');
    await t.srv.recheck();
    expect((await get(base + '/')).headers['x-airlock-version']).toBe('v1');
    expect(logs.join('\n')).toContain('v9-missing');
  });

  it('8 concurrent clients while switching back and forth: zero errors, no mixed response, every switch served, typically in < 1 s', async () => {
    const store = await twoVersions();
    const sw = swaps();
    t.srv = await createAirlockServer({ store, onVersion: sw.onVersion });
    const base = (await t.srv.listen(0)).slice(0, -1);
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
        delays.push(await switchTo(store, base, sw, label));
        await new Promise((res) => setTimeout(res, 200));
      }
      return delays;
    };
    const [delays] = await Promise.all([switcher(), ...Array.from({ length: 8 }, (_, n) => client(n))]);
    expect(errors.slice(0, 5)).toEqual([]);
    expect(ok).toBeGreaterThan(100);
    expect(delays.length).toBeGreaterThanOrEqual(2);
    // Every switch was swapped in (none Infinity) and served; the median within the 1 s promise.
    // The slowest one only within 3 s: 8 clients, the watcher and this test share one event loop
    // on a CI machine running other test files.
    const sorted = [...delays].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(1000);
    expect(sorted.at(-1)).toBeLessThan(3000);
  }, 60_000);
});
