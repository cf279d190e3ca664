import { describe, it, expect } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Follower, targetOf } from '../../src/fleet/index.js';
import { Rollout, type FleetAnswer } from '../../src/mirror/index.js';
import { createAirlockServer } from '../../src/serve/index.js';
import { tempDir } from '../mirror/helpers.js';
import { jsonMutants, mutants, toJson } from '../helpers/mutate.js';
import { addVersion, FLEET_TOKEN, makeSigner, sitePackage, startMirror } from './rig.js';
import { cleanupAfterEach } from '../helpers/scope.js';
import { until } from '../helpers/wait.js';
import { sha256 } from '../serve/helpers.js';

const cleanups = cleanupAfterEach();

describe('fleet rollout state (pure)', () => {
  const log: string[] = [];
  const report = (replica: string, o: { serving?: string; prepared?: string | null; refused?: { version: string; reason: string } | null } = {}) => ({
    replica,
    serving: o.serving ?? 'v1',
    prepared: o.prepared ?? null,
    refused: o.refused ?? null,
  });

  it('switches only once every live replica prepared the version; a silent replica stops counting', () => {
    const r = new Rollout({ leadMs: 1000, prepareTimeoutMs: 60_000, replicaTtlMs: 5000, log: (l) => log.push(l) });
    expect(r.step('v1', report('a'), 0).phase).toBe('switch'); // everyone serves it already
    expect(r.step('v2', report('a'), 100).phase).toBe('preparing');
    expect(r.step('v2', report('b'), 200).phase).toBe('preparing');
    expect(r.step('v2', report('a', { prepared: 'v2' }), 300).phase).toBe('preparing'); // b not yet
    const s = r.step('v2', report('b', { prepared: 'v2' }), 400);
    expect(s.phase).toBe('switch');
    expect(r.activateAt).toBe(1400);
    // The instant is fixed once set.
    r.step('v2', report('a', { prepared: 'v2' }), 900);
    expect(r.activateAt).toBe(1400);
    // A new version restarts; b goes silent and drops out after the TTL.
    expect(r.step('v3', report('a', { prepared: 'v3' }), 1000).phase).toBe('preparing');
    expect(r.step('v3', report('a', { prepared: 'v3' }), 6000).phase).toBe('switch');
  });

  it('a refusal holds the rollout; the prepare deadline switches without stragglers', () => {
    const r = new Rollout({ leadMs: 1000, prepareTimeoutMs: 10_000, replicaTtlMs: 60_000, log: () => {} });
    r.step('v2', report('b'), 0);
    expect(r.step('v2', report('a', { prepared: 'v2' }), 1).phase).toBe('preparing');
    expect(r.step('v2', report('b', { refused: { version: 'v2', reason: 'AIRLOCK_SIG: bad' } }), 10).phase).toBe('held');
    expect(r.step('v2', report('a', { prepared: 'v2' }), 20_000).phase).toBe('held');
    expect(r.held).toEqual({ replica: 'b', reason: 'AIRLOCK_SIG: bad' });
    const q = new Rollout({ leadMs: 1000, prepareTimeoutMs: 10_000, replicaTtlMs: 60_000, log: () => {} });
    q.step('v2', report('b'), 0);
    expect(q.step('v2', report('a', { prepared: 'v2' }), 10).phase).toBe('preparing');
    expect(q.step('v2', report('b'), 5000).phase).toBe('preparing');
    expect(q.step('v2', report('b'), 10_000).phase).toBe('switch');
  });
});

describe('fleet endpoint fuzz (bounded)', () => {
  it('mutated reports: 200, 400 or 413, never a crash, the mirror store unchanged', async () => {
    const t = await tempDir('airlock-fleet-fuzz-');
    cleanups.push(t.cleanup);
    const signer = await makeSigner(join(t.dir, 'signer'));
    const store = join(t.dir, 'store');
    await addVersion(store, await sitePackage(t.dir, 'v1', signer), signer, true);
    const before = JSON.stringify([await readdir(join(store, 'versions')), await readFile(join(store, 'state.json'), 'utf8')]);
    const m = await startMirror(t.dir, store);
    cleanups.push(() => m.srv.close(100));
    const post = (body: Buffer | string, token = FLEET_TOKEN) =>
      fetch(m.url + '/_airlock/fleet/poll', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : new Uint8Array(body),
      });
    const valid = Buffer.from(JSON.stringify({ replica: 'r1', serving: 'v1', prepared: null, refused: null }));
    expect((await post(valid)).status).toBe(200);
    expect((await post(valid, 'svc_wrong_token_xxxxxxxxxxxxxxxxxxxx')).status).toBe(403);
    const statuses = new Set<number>();
    for (const mu of mutants(valid, 150, 0xf1ee7)) {
      const r = await post(mu.bytes);
      statuses.add(r.status);
      expect([200, 400, 413], `mutant ${mu.index} (${mu.mutation})`).toContain(r.status);
      await r.arrayBuffer();
    }
    for (const mu of jsonMutants(JSON.parse(valid.toString()), 150, 0xf1ee8)) {
      const r = await post(toJson(mu.value));
      expect([200, 400, 413], `json mutant ${mu.index} (${mu.what})`).toContain(r.status);
      await r.arrayBuffer();
    }
    expect((await post('x'.repeat(20_000))).status).toBe(413);
    expect(statuses.has(400)).toBe(true);
    expect((await post(valid)).status).toBe(200);
    expect(JSON.stringify([await readdir(join(store, 'versions')), await readFile(join(store, 'state.json'), 'utf8')])).toBe(before);
  });

  it('a hostile mirror (mutated, huge, nested answers): the follower never switches nor imports, keeps serving', async () => {
    const t = await tempDir('airlock-fleet-fuzz-');
    cleanups.push(t.cleanup);
    const signer = await makeSigner(join(t.dir, 'signer'));
    const store = join(t.dir, 'store');
    await addVersion(store, await sitePackage(t.dir, 'v1', signer), signer, true);
    const valid: FleetAnswer = {
      version: 'v2',
      packageSha256: 'a'.repeat(64),
      packageUrl: 'http://127.0.0.1:1/_airlock/objects/v2/package.airlock?x',
      phase: 'switch',
      activateInMs: 0,
      activateAt: null,
      held: null,
      replicas: 1,
      prepared: 1,
    };
    const bodies: Buffer[] = [];
    for (const mu of mutants(Buffer.from(JSON.stringify(valid)), 40, 0xbad)) bodies.push(mu.bytes);
    for (const mu of jsonMutants(valid, 40, 0xbad1)) bodies.push(Buffer.from(toJson(mu.value)));
    bodies.push(Buffer.alloc(200_000, 0x7b), Buffer.from('['.repeat(100_000)));
    // Every other answer is a calm one (no version), so the follower's backoff resets and the run stays short.
    const calm = Buffer.from(JSON.stringify({ ...valid, version: null, packageSha256: null, packageUrl: null, phase: 'none', activateInMs: null }));
    let i = 0;
    let n = 0;
    const hostile: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(n++ % 2 === 1 ? calm : bodies[i++ % bodies.length]);
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise((r) => {
          hostile.closeAllConnections();
          hostile.close(() => r());
        }),
    );
    const f = new Follower({
      mirror: `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`,
      token: FLEET_TOKEN,
      store,
      trust: [signer.pubPath],
      allowUnsigned: false,
      pollMs: 40,
      replicaId: 'r',
      log: () => {},
    });
    const srv = await createAirlockServer({ store, lease: false, log: () => {} });
    cleanups.push(async () => {
      await f.stop();
      await srv.close(100);
    });
    f.start(targetOf(srv));
    // About 10 s on an idle 2-core machine: 164 polls 40 ms apart, 80 ms after an answer refused as malformed (the
    // failed downloads of the announced versions back off on their own, not the polls). 50 s of room.
    await until(() => i >= bodies.length, { timeoutMs: 50_000, intervalMs: 50 }).catch(() => undefined);
    expect(i).toBeGreaterThanOrEqual(bodies.length);
    expect(srv.current().version).toBe('v1');
    expect(await readdir(join(store, 'versions'))).toEqual(['v1']);
  }, 90_000);
});

describe('a mirror pointing a follower at the wrong package', () => {
  /** A mirror that announces v2 at /pkg (the file `pkg`, or `pkgStatus`), counting its polls and downloads. */
  async function mirrorOf(o: { pkg: string; sha256: string; pkgStatus?: number }) {
    const bytes = await readFile(o.pkg);
    let base = '';
    let downloads = 0;
    let polls = 0;
    const mirror: Server = createServer((req, res) => {
      req.resume();
      if (!req.url?.startsWith('/pkg')) polls++;
      if (req.url?.startsWith('/pkg') && o.pkgStatus !== undefined) return void (downloads++, res.writeHead(o.pkgStatus).end('gone'));
      if (req.url?.startsWith('/pkg')) return void (downloads++, res.writeHead(200, { 'content-length': bytes.length }).end(bytes));
      const a: FleetAnswer = {
        version: 'v2',
        packageSha256: o.sha256,
        packageUrl: `${base}/pkg`,
        phase: 'switch',
        activateInMs: 0,
        activateAt: null,
        held: null,
        replicas: 1,
        prepared: 1,
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(a));
    });
    await new Promise<void>((r) => mirror.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}`;
    cleanups.push(() => {
      mirror.closeAllConnections();
      mirror.close();
    });
    return { base, downloads: () => downloads, polls: () => polls };
  }

  /** A follower of `store` (serving) whose mirror announces v2, until `until` holds (default: v2 refused). */
  async function follow(o: { pkg: string; sha256: string; site?: string; store: string; trust: string; pkgStatus?: number; until?: (f: Follower) => boolean }) {
    const m = await mirrorOf(o);
    const f = new Follower({
      mirror: m.base,
      token: FLEET_TOKEN,
      store: o.store,
      site: o.site,
      trust: [o.trust],
      allowUnsigned: false,
      pollMs: 40,
      replicaId: 'r',
      log: () => {},
    });
    const srv = await createAirlockServer({ store: o.store, lease: false, log: () => {} });
    cleanups.push(async () => {
      await f.stop();
      await srv.close(100);
    });
    f.start(targetOf(srv));
    await until(() => (o.until ?? ((x) => x.status.refused !== null))(f), { timeoutMs: 20_000, intervalMs: 20 });
    return { f, srv, downloads: m.downloads, polls: m.polls };
  }

  /** At most how many downloads `ms` leaves room for, when the waits after failures are 80, 160, 320… ms (poll 40 ms). */
  const retriesWithin = (ms: number) => Math.floor(Math.log2(ms / 40 + 2) - 1) + 1;

  it("another site's package (a library's follower): refused, never imported; the mirror's stated sha256 that the download lacks: refused", async () => {
    const t = await tempDir('airlock-fleet-wrong-');
    cleanups.push(t.cleanup);
    const signer = await makeSigner(join(t.dir, 'signer'));
    const v2 = await sitePackage(t.dir, 'v2', signer);
    const sha = sha256(await readFile(v2));
    for (const [name, o, code] of [
      ['other site', { site: 'other.example', sha256: sha }, 'AIRLOCK_DOMAIN_MISMATCH'],
      ['wrong digest', { sha256: 'b'.repeat(64) }, 'AIRLOCK_SHA256_MISMATCH'],
    ] as const) {
      const store = join(t.dir, `store-${name.replace(' ', '-')}`);
      await addVersion(store, await sitePackage(t.dir, 'v1', signer), signer, true);
      const { f, srv } = await follow({ pkg: v2, store, trust: signer.pubPath, ...o });
      expect(f.status.refused, name).toMatchObject({ version: 'v2', reason: expect.stringContaining(code) });
      expect(srv.current().version).toBe('v1');
      expect(await readdir(join(store, 'versions'))).toEqual(['v1']);
    }
  }, 60_000);

  it('a package under a label the store holds with other content: refused and reported once, never downloaded again', async () => {
    const t = await tempDir('airlock-fleet-conflict-');
    cleanups.push(t.cleanup);
    const signer = await makeSigner(join(t.dir, 'signer'));
    const store = join(t.dir, 'store');
    await addVersion(store, await sitePackage(join(t.dir, 'here'), 'v1', signer), signer, true);
    await addVersion(store, await sitePackage(join(t.dir, 'here'), 'v2', signer), signer, false); // this replica's own v2
    const theirs = await sitePackage(join(t.dir, 'mirror'), 'v2', signer, 4096); // the mirror's v2: other content
    const sha = sha256(await readFile(theirs));
    const { f, srv, downloads, polls } = await follow({ pkg: theirs, sha256: sha, store, trust: signer.pubPath });
    expect(f.status.refused).toMatchObject({ version: 'v2', reason: expect.stringContaining('AIRLOCK_VERSION_CONFLICT') });
    const seen = polls();
    await until(() => polls() >= seen + 25, { timeoutMs: 20_000, intervalMs: 20 }); // 25 more polls of the mirror
    expect(downloads()).toBe(1);
    expect(srv.current().version).toBe('v1');
  }, 60_000);

  it('a download that keeps failing is tried again after a growing wait, while the polls go on (the mirror keeps counting the replica)', async () => {
    const t = await tempDir('airlock-fleet-failing-');
    cleanups.push(t.cleanup);
    const signer = await makeSigner(join(t.dir, 'signer'));
    const store = join(t.dir, 'store');
    await addVersion(store, await sitePackage(t.dir, 'v1', signer), signer, true);
    const v2 = await sitePackage(t.dir, 'v2', signer);
    const { f, downloads, polls } = await follow({
      pkg: v2,
      sha256: 'c'.repeat(64),
      store,
      trust: signer.pubPath,
      pkgStatus: 404,
      until: (x) => x.status.downloadError !== null,
    });
    const [first, seen, t0] = [downloads(), polls(), performance.now()];
    // 30 polls at 40 ms: a follower that slowed its polls with the download's backoff would take minutes.
    await until(() => polls() >= seen + 30, { timeoutMs: 20_000, intervalMs: 20 });
    const tried = downloads() - first;
    expect(tried).toBeGreaterThanOrEqual(1); // still tried (the first wait is 80 ms; 30 polls take at least 960 ms)
    expect(tried).toBeLessThanOrEqual(retriesWithin(performance.now() - t0 + 100));
    expect(f.status.refused).toBeNull();
    expect(f.status.mirror_state).toBe('ok');
  }, 60_000);

  it('the same before there is a server (an empty store): polls go on, downloads back off', async () => {
    const t = await tempDir('airlock-fleet-failing-first-');
    cleanups.push(t.cleanup);
    const signer = await makeSigner(join(t.dir, 'signer'));
    const v2 = await sitePackage(t.dir, 'v2', signer);
    const m = await mirrorOf({ pkg: v2, sha256: 'c'.repeat(64), pkgStatus: 404 });
    const f = new Follower({
      mirror: m.base,
      token: FLEET_TOKEN,
      store: join(t.dir, 'store'),
      trust: [signer.pubPath],
      allowUnsigned: false,
      pollMs: 40,
      replicaId: 'r',
      log: () => {},
    });
    const stop = new AbortController();
    const t0 = performance.now();
    const first = f.first(stop.signal, { keep: true }).catch((err: unknown) => err);
    await until(() => m.polls() >= 30, { timeoutMs: 20_000, intervalMs: 20 });
    const ms = performance.now() - t0;
    stop.abort();
    expect(await first).toBeInstanceOf(Error); // stopped, never installed
    expect(m.downloads()).toBeGreaterThanOrEqual(2);
    expect(m.downloads()).toBeLessThanOrEqual(retriesWithin(ms) + 1); // + the first try
    expect(await readdir(join(t.dir, 'store')).catch(() => [])).not.toContain('versions');
  }, 60_000);
});
