import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fetchPackage, partPathFor, type FetchEvent } from '../../src/fetch/index.js';
import { bundleWhenReady } from '../../src/fetch/poll.js';
import { generateKeyPair, loadPrivateKey, loadPublicKey, readPackage, verifyPackage } from '../../src/package/index.js';
import { ServiceClient } from '../../src/upstream/index.js';
import { FAST, rig, tree, type Rig } from './emu.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const base = (x: Rig, domain = 'docs.example.com') => ({ client: x.client, domain, outDir: x.out, ...FAST });
const objectGets = (x: Rig) => x.emu.state.objectRequests.filter((q) => q.method === 'GET');

describe('fetchPackage against the emulator', () => {
  it('tar.gz: starts a job, polls with progress, downloads without Authorization, writes a verifiable package', async () => {
    // The job's clock moves 5 ms per reading, not with the wall clock: its 120 ms of running are
    // seen by the polls however slow the machine is.
    let t = Date.now();
    r = await rig({ now: () => (t += 5) });
    const events: FetchEvent[] = [];
    const s = await fetchPackage({ ...base(r), versionLabel: 'v1', onEvent: (e) => events.push(e) });
    expect(s.package).toBe(join(r.out, 'docs.example.com-v1.airlock'));
    expect(s).toMatchObject({
      version: 'v1',
      domain: 'docs.example.com',
      signed: false,
      resumedBytes: 0,
      archive: { name: 'bundle.tar.gz', format: 'tar.gz' },
    });
    expect(s.files).toBeGreaterThan(3);
    const layout = await readPackage(s.package);
    expect(layout.manifest).toMatchObject({ jobId: s.jobId, version: 'v1', archive: { sha256: s.archive.sha256, size: s.archive.size } });
    expect(layout.manifest.files.some((f) => f.path === 'index.html')).toBe(true);
    expect(events.some((e) => e.type === 'status' && e.job.status === 'running')).toBe(true);
    expect(events.some((e) => e.type === 'download')).toBe(true);
    expect(objectGets(r).length).toBe(1);
    expect(r.emu.state.objectRequests.every((q) => q.headers.authorization === undefined)).toBe(true);
    expect(await tree(r.out)).toEqual(['docs.example.com-v1.airlock']);
  });

  it('zip: the archive becomes bundle.zip, and a signed package verifies with the public key', async () => {
    r = await rig();
    const keys = await generateKeyPair(join(r.dir, 'signer'));
    const s = await fetchPackage({ ...base(r, 'zip.example.com'), signKey: await loadPrivateKey(keys.keyPath) });
    expect(s.archive).toMatchObject({ name: 'bundle.zip', format: 'zip' });
    expect(s.version).toMatch(/^\d{8}-\d{6}$/);
    const report = await verifyPackage(s.package, { trust: [await loadPublicKey(keys.pubPath)] });
    expect(report).toMatchObject({ signed: true, signer: keys.fingerprint });
  });

  it('job failed upstream → exit 3 with the service error text, nothing written', async () => {
    r = await rig({ faults: { failingDomains: ['docs.example.com'] } });
    const err = await fetchPackage(base(r)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AIRLOCK_JOB_FAILED', exitCode: 3 });
    expect((err as Error).message).toContain('exited with code 1');
    // Nothing written: the output folder is created only when the download starts.
    expect(existsSync(r.out)).toBe(false);
  });

  it('unknown --job → 404 named, exit 1', async () => {
    r = await rig();
    await expect(fetchPackage({ ...base(r), jobId: 'job_does_not_exist' })).rejects.toMatchObject({ code: 'AIRLOCK_NOT_FOUND', exitCode: 1 });
  });

  it('401 for an unknown admin key and 403 for a key without permission → exit 5', async () => {
    r = await rig({ forbiddenKeys: ['svc_forbidden_key_1'] });
    const bad = new ServiceClient({ baseUrl: r.emu.url, adminKey: 'svc_not_a_known_key' });
    await expect(fetchPackage({ ...base(r), client: bad })).rejects.toMatchObject({ exitCode: 5 });
    const forbidden = new ServiceClient({ baseUrl: r.emu.url, adminKey: 'svc_forbidden_key_1' });
    await expect(fetchPackage({ ...base(r), client: forbidden })).rejects.toMatchObject({ exitCode: 5 });
    expect(r.emu.state.apiRequests.map((q) => q.status)).toEqual([401, 403]);
  });

  it('429 with Retry-After and a burst of 500s are retried, then the fetch succeeds', async () => {
    r = await rig({ faults: { burst429: { count: 1, retryAfterSeconds: 1 }, burst500: { count: 2 } } });
    const t0 = Date.now();
    await fetchPackage(base(r));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(r.emu.state.apiRequests.slice(0, 4).map((q) => q.status)).toEqual([429, 500, 500, 202]);
  });

  it('early bundle: 409 while the job runs, then the link', async () => {
    // The emulator's clock stands still but for 100 ms after each bundle request: the requests at
    // 0, 100, 200 and 300 ms fall in the job's 330 ms of life and the one at 400 ms after it,
    // however slowly the machine answers (on the wall clock the first had to come within 330 ms).
    let clock = Date.now();
    r = await rig({ timings: { queuedMs: 30, runningMs: 300 }, now: () => clock });
    const rr = r;
    const client = {
      startExport: rr.client.startExport.bind(rr.client),
      getExport: rr.client.getExport.bind(rr.client),
      getBundle: async (id: string) => {
        try {
          return await rr.client.getBundle(id);
        } finally {
          clock += 100;
        }
      },
    };
    const job = await client.startExport('docs.example.com');
    const link = await bundleWhenReady(client, job.jobId, { intervalMs: 40, timeoutMs: 5000 });
    expect(link.bundleUrl).toContain('/_objects/');
    expect(r.emu.state.apiRequests.filter((q) => q.path.endsWith('/bundle')).map((q) => q.status)).toEqual([409, 409, 409, 409, 200]);
  });

  it('connection dropped mid-download → resumed with Range; the server sent each byte once', async () => {
    r = await rig();
    const first = await fetchPackage({ ...base(r), versionLabel: 'a' });
    const size = first.archive.size;
    r.emu.setFaults({ dropAfterBytes: { bytes: Math.floor(size / 3), times: 2 } });
    const before = objectGets(r).length;
    const s = await fetchPackage({ ...base(r), versionLabel: 'b' });
    const gets = objectGets(r).slice(before);
    expect(gets.map((q) => q.headers.range)).toEqual([undefined, `bytes=${Math.floor(size / 3)}-`, `bytes=${2 * Math.floor(size / 3)}-`]);
    expect(gets.reduce((n, q) => n + q.bytesSent, 0)).toBe(size);
    expect(s.archive.sha256).toBe(first.archive.sha256);
  });

  it('link expired before the download → a fresh link, no request with the stale one', async () => {
    r = await rig({ faults: { linkLifetimeSeconds: 0 } });
    const rr = r;
    const client = {
      startExport: rr.client.startExport.bind(rr.client),
      getExport: rr.client.getExport.bind(rr.client),
      getBundle: async (id: string) => {
        const l = await rr.client.getBundle(id);
        rr.emu.setFaults({ linkLifetimeSeconds: 900 });
        return l;
      },
    };
    const s = await fetchPackage({ ...base(r), client });
    expect(s.freshLinks).toBe(1);
    expect(objectGets(r).map((q) => q.status)).toEqual([200]);
  });

  it('link expired during the download (GCS 400 ExpiredToken) → a fresh link, resumed from the same offset', async () => {
    // The emulator's clock jumps an hour once the first download of 'b' was cut: its link expires
    // between the two requests whatever the machine's speed (a 1 s lifetime once raced a slow CI).
    let jump = (): number => 0;
    r = await rig({ faults: { storage: 'gcs' }, now: () => Date.now() + jump() });
    const size = (await fetchPackage({ ...base(r), versionLabel: 'a' })).archive.size;
    const cut = Math.floor(size / 2);
    r.emu.setFaults({ dropAfterBytes: { bytes: cut, times: 1 } });
    const rr = r;
    // expiresAt reported far ahead, so only the storage's own 400 can reveal the expiry.
    const client = {
      startExport: rr.client.startExport.bind(rr.client),
      getExport: rr.client.getExport.bind(rr.client),
      getBundle: async (id: string) => ({ ...(await rr.client.getBundle(id)), expiresAt: new Date(Date.now() + 3_600_000).toISOString() }),
    };
    const before = objectGets(r).length;
    jump = () => ((objectGets(rr)[before]?.bytesSent ?? 0) >= cut ? 3_600_000 : 0);
    const s = await fetchPackage({ ...base(r), versionLabel: 'b', client });
    const gets = objectGets(r).slice(before);
    expect(gets.map((q) => [q.status, q.headers.range])).toEqual([
      [200, undefined],
      [400, `bytes=${cut}-`],
      [206, `bytes=${cut}-`],
    ]);
    expect(s.freshLinks).toBe(1);
    expect(gets.reduce((n, q) => n + q.bytesSent, 0)).toBe(size);
  });

  it('size mismatch (sizeBytes) → exit 4, no package, no part', async () => {
    r = await rig({ faults: { wrongSizeBytes: 12345 } });
    await expect(fetchPackage(base(r))).rejects.toMatchObject({ code: 'AIRLOCK_SIZE_MISMATCH', exitCode: 4 });
    expect(await tree(r.out)).toEqual([]);
  });

  it('MD5 mismatch (ETag) → exit 4, no package, no part', async () => {
    r = await rig({ faults: { wrongEtag: true } });
    await expect(fetchPackage(base(r))).rejects.toMatchObject({ code: 'AIRLOCK_MD5_MISMATCH', exitCode: 4 });
    expect(await tree(r.out)).toEqual([]);
  });

  it('truncated object → exit 4, no package, no part', async () => {
    r = await rig({ faults: { truncateObjectAt: 1000 } });
    await expect(fetchPackage(base(r))).rejects.toMatchObject({ exitCode: 4 });
    expect(await tree(r.out)).toEqual([]);
  });

  it('an interrupted run keeps the part; a plain re-run reuses the job and resumes', async () => {
    r = await rig({ faults: { throttleBytesPerSec: 30_000 } });
    const ac = new AbortController();
    const events: FetchEvent[] = [];
    const first = fetchPackage({
      ...base(r),
      signal: ac.signal,
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'download' && e.progress.bytes > (e.progress.total ?? 0) / 4) ac.abort();
      },
    });
    await expect(first).rejects.toMatchObject({ code: 'AIRLOCK_INTERRUPTED' });
    const part = partPathFor(r.out, 'docs.example.com');
    const kept = (await readFile(part)).length;
    const total = events.flatMap((e) => (e.type === 'download' ? [e.progress.total!] : []))[0]!;
    expect(kept).toBeGreaterThan(total / 4);
    expect(kept).toBeLessThan(total);
    expect(await tree(r.out)).toEqual(['.docs.example.com.bundle.part', '.docs.example.com.bundle.part.json']);
    r.emu.setFaults({ throttleBytesPerSec: null });
    const jobs = r.emu.state.jobs.size;
    const s = await fetchPackage(base(r));
    expect(r.emu.state.jobs.size).toBe(jobs);
    expect(s.resumedBytes).toBe(kept);
    expect(objectGets(r).at(-1)!.headers.range).toBe(`bytes=${kept}-`);
    expect(existsSync(part)).toBe(false);
  });

  it('a stale part with a corrupt sidecar is not trusted', async () => {
    r = await rig();
    const part = partPathFor(r.out, 'docs.example.com');
    await fetchPackage({ ...base(r), versionLabel: 'x' }).then(() => writeFile(part, 'garbage'));
    await writeFile(part + '.json', '{"format":"airlock-part/1","etag":1}');
    const s = await fetchPackage({ ...base(r), versionLabel: 'y' });
    expect(s.resumedBytes).toBe(0);
  });

  it('refuses a --domain that would escape the output folder, before any request', async () => {
    r = await rig();
    await expect(fetchPackage({ ...base(r), domain: '../evil' })).rejects.toMatchObject({ exitCode: 2 });
    expect(r.emu.state.apiRequests).toEqual([]);
  });
});
