import { until as waitUntil } from '../helpers/wait.js';
import { describe, it, expect } from 'vitest';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Follower, targetOf } from '../../src/fleet/index.js';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { readyRoutes } from '../../src/start/ready.js';
import { tempDir } from '../mirror/helpers.js';
import { addVersion, FLEET_TOKEN, makeSigner, sitePackage, startMirror, type Signer } from './rig.js';
import { cleanupAfterEach } from '../helpers/scope.js';

/** serve --follow in process: a mirror and replicas (servers + followers) on 127.0.0.1. */
const cleanups = cleanupAfterEach();

interface Replica {
  store: string;
  srv: AirlockServer;
  f: Follower;
  url: string;
  switched: Array<{ v: string; at: number }>;
}

async function replica(root: string, name: string, mirror: string, pkgV1: string, signer: Signer, trust: string[], mirrorUrl = mirror): Promise<Replica> {
  const store = join(root, name);
  await addVersion(store, pkgV1, signer, true);
  const switched: Array<{ v: string; at: number }> = [];
  const f = new Follower({
    mirror: mirrorUrl,
    token: FLEET_TOKEN,
    store,
    trust,
    allowUnsigned: false,
    pollMs: 150,
    replicaId: name,
    log: (l) => process.env.FDEBUG && console.log(name, l),
    onSwitch: (v, at) => switched.push({ v, at }),
  });
  const srv = await createAirlockServer({
    store,
    lease: false,
    log: () => {},
    app: readyRoutes(
      () => null,
      () => f.status,
    ),
  });
  const url = (await srv.listen(0)).replace(/\/$/, '');
  f.start(targetOf(srv));
  cleanups.push(async () => {
    await f.stop();
    await srv.close(100);
  });
  return { store, srv, f, url, switched };
}

/** Whether `cond` came true within `limitMs` (the tests' one bounded wait). */
const until = (cond: () => boolean | Promise<boolean>, limitMs: number): Promise<boolean> =>
  waitUntil(async () => (await cond()) || null, { timeoutMs: limitMs, intervalMs: 25 }).then(
    () => true,
    () => false,
  );

async function fleet(n: number, leadMs = 600, trustOthers: (i: number) => boolean = () => true) {
  const t = await tempDir('airlock-follow-');
  cleanups.push(t.cleanup);
  const signer = await makeSigner(join(t.dir, 'signer'));
  const other = await makeSigner(join(t.dir, 'other'));
  const mstore = join(t.dir, 'mirror-store');
  const v1 = await sitePackage(t.dir, 'v1', signer);
  await addVersion(mstore, v1, signer, true);
  const m = await startMirror(t.dir, mstore, { leadMs });
  cleanups.push(() => m.srv.close(100));
  const rs: Replica[] = [];
  for (let i = 0; i < n; i++) rs.push(await replica(t.dir, `r${i}`, m.url, v1, signer, trustOthers(i) ? [signer.pubPath, other.pubPath] : [signer.pubPath]));
  return { dir: t.dir, signer, other, mstore, m, rs };
}

describe('serve --follow', () => {
  it('every replica prepares the new version, then all switch at the announced instant (within 1 s of each other)', async () => {
    // A replica learns the switch instant at its next poll, which a loaded machine can delay: a
    // 3 s lead leaves room for slow polls, while replicas that did not wait for the instant would
    // still be seconds apart, or switch before it (checked below).
    const leadMs = 3000;
    const { dir, signer, mstore, rs } = await fleet(3, leadMs);
    const published = Date.now();
    await addVersion(mstore, await sitePackage(dir, 'v2', signer), signer, true);
    expect(await until(() => rs.every((r) => r.srv.current().version === 'v2'), 20_000)).toBe(true);
    const at = rs.map((r) => r.switched.find((s) => s.v === 'v2')!.at);
    expect(Math.max(...at) - Math.min(...at)).toBeLessThan(1000);
    // The mirror fixes the instant at least the lead after v2 was published (a timer may fire a
    // few milliseconds early): no replica switched on its own, as soon as it was prepared.
    expect(Math.min(...at)).toBeGreaterThanOrEqual(published + leadMs - 50);
    // Prepared before the switch, so the switch itself waited for no download.
    for (const r of rs) {
      expect(r.f.status.lastSwitch?.version).toBe('v2');
      expect((await readdir(join(r.store, 'versions'))).sort()).toEqual(['v1', 'v2']);
      const ready = (await (await fetch(r.url + '/_airlock/ready')).json()) as { version: string; follow: { mirror_state: string } };
      expect(ready.version).toBe('v2');
      expect(ready.follow.mirror_state).toBe('ok');
    }
  });

  it('a version one replica refuses (untrusted signer) is held: no replica switches; ready and the mirror say why', async () => {
    // Replica r1 trusts only the first signer: it must refuse v2 (signed by the other), and r0, which would accept it, must not switch either.
    const { dir, other, mstore, m, rs } = await fleet(2, 600, (i) => i !== 1);
    await addVersion(mstore, await sitePackage(dir, 'v2', other), other, true);
    expect(await until(() => rs[1]!.f.status.refused?.version === 'v2', 10_000)).toBe(true);
    const fleetView = async () =>
      (await fetch(m.url + '/_airlock/fleet', { headers: { authorization: `Bearer ${FLEET_TOKEN}` } })).json() as Promise<{
        phase: string;
        held: { replica: string; reason: string } | null;
      }>;
    expect(await until(async () => (await fleetView()).phase === 'held', 5_000)).toBe(true);
    // Long enough for a switch to have happened (lead 600 ms, polls every 150 ms).
    await new Promise((r) => setTimeout(r, 1500));
    expect(rs.map((r) => r.srv.current().version)).toEqual(['v1', 'v1']);
    const view = await fleetView();
    expect(view.held?.replica).toBe('r1');
    expect(view.held?.reason).toMatch(/AIRLOCK_/);
    const ready = (await (await fetch(rs[1]!.url + '/_airlock/ready')).json()) as { follow: { refused: { version: string; reason: string } } };
    expect(ready.follow.refused.version).toBe('v2');
    // The refused version never entered r1's store.
    expect(await readdir(join(rs[1]!.store, 'versions'))).toEqual(['v1']);
  });

  it('mirror unreachable: keeps serving, ready says so; back again: the rollout goes on', async () => {
    const { dir, signer, mstore, m, rs } = await fleet(1);
    const port = Number(new URL(m.url).port);
    await m.srv.close(100);
    expect(await until(() => rs[0]!.f.status.mirror_state === 'unreachable', 5_000)).toBe(true);
    const r = await fetch(rs[0]!.url + '/index.html');
    expect(r.status).toBe(200);
    const ready = (await (await fetch(rs[0]!.url + '/_airlock/ready')).json()) as { status: string; follow: { mirror_state: string; error: string } };
    expect(ready.status).toBe('ready');
    expect(ready.follow.mirror_state).toBe('unreachable');
    expect(ready.follow.error).toMatch(/^AIRLOCK_MIRROR_UNREACHABLE: could not connect to 127\.0\.0\.1:\d+ \(connection refused\)$/);
    await addVersion(mstore, await sitePackage(dir, 'v2', signer), signer, true);
    const again = await startMirror(dir, mstore, { leadMs: 300, port });
    cleanups.push(() => again.srv.close(100));
    // Backoff is at most 30 s; with a 150 ms poll it is a few seconds at most here.
    expect(await until(() => rs[0]!.srv.current().version === 'v2', 20_000)).toBe(true);
  });

  it('mirror gone mid-download: retried, nothing partial in the store, then switched', async () => {
    const t = await tempDir('airlock-follow-');
    cleanups.push(t.cleanup);
    const signer = await makeSigner(join(t.dir, 'signer'));
    const mstore = join(t.dir, 'mirror-store');
    const v1 = await sitePackage(t.dir, 'v1', signer);
    await addVersion(mstore, v1, signer, true);
    let m = await startMirror(t.dir, mstore, { leadMs: 300 });
    const port = Number(new URL(m.url).port);
    const r = await replica(t.dir, 'r0', m.url, v1, signer, [signer.pubPath]);
    await addVersion(mstore, await sitePackage(t.dir, 'v2', signer, 48 * 1024 * 1024), signer, true);
    // Stop the mirror as soon as the download has started.
    expect(await until(async () => (await readdir(join(r.store, 'downloads')).catch(() => [])).some((n) => n.endsWith('.part')), 10_000)).toBe(true);
    await m.srv.close(0);
    await new Promise((res) => setTimeout(res, 300));
    expect(await readdir(join(r.store, 'versions'))).toEqual(['v1']);
    expect(r.srv.current().version).toBe('v1');
    m = await startMirror(t.dir, mstore, { leadMs: 300, port });
    cleanups.push(() => m.srv.close(100));
    expect(await until(() => r.srv.current().version === 'v2', 30_000)).toBe(true);
    expect((await readdir(join(r.store, 'versions'))).sort()).toEqual(['v1', 'v2']);
    expect((await readdir(join(r.store, 'downloads'))).filter((n) => n.endsWith('.part'))).toEqual([]);
  });
});
