import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startEmulator, packageRoot, type RunningEmulator } from '../../src/emulator/index.js';
import { listVersions, importPackage, readState } from '../../src/store/index.js';
import { ServiceClient } from '../../src/upstream/index.js';
import { makePackage } from '../helpers/make-package.js';
import { siteFiles, tgz } from '../helpers/evil-archives.js';
import { run, start, tempDir, type Running } from '../mirror/helpers.js';
import { until } from '../helpers/wait.js';

/** `airlock serve --values FILE` as a binary: start-up plan, downloads, fallbacks, readiness. */
let emu: RunningEmulator;
let t: Awaited<ReturnType<typeof tempDir>>;
let pkgV1: string;
let n = 0;
const running: Running[] = [];

beforeAll(async () => {
  emu = await startEmulator({
    timings: { queuedMs: 10, runningMs: 30 },
    sites: { 'docs.example.com': { dir: join(packageRoot(), 'fixtures', 'site'), format: 'tar.gz' } },
  });
  t = await tempDir('airlock-values-');
  pkgV1 = (await makePackage({ outDir: join(t.dir, 'pkgs'), version: 'v1' })).pkgPath;
});
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
  emu.setFaults({ linkLifetimeSeconds: 900, truncateObjectAt: null, serveArchive: [], throttleBytesPerSec: null });
});
afterAll(async () => {
  await emu.close();
  await t.cleanup();
});

/** A fresh store (optionally holding v1, active) and a values file in its own folder. */
async function setup(yaml: string, withV1 = true): Promise<{ dir: string; store: string; values: string }> {
  const dir = join(t.dir, `case${++n}`);
  const store = join(dir, 'store');
  await mkdir(dir, { recursive: true });
  if (withV1) await importPackage(pkgV1, { store, trust: [], allowUnsigned: true, activate: true });
  const values = join(dir, 'values.yaml');
  await writeFile(values, yaml.replaceAll('STORE', store));
  return { dir, store, values };
}

async function bundleLink(): Promise<string> {
  const c = new ServiceClient({ baseUrl: emu.url, adminKey: emu.keys.admin });
  const job = await c.startExport('docs.example.com');
  await until(async () => (await c.getExport(job.jobId)).status === 'completed', { timeoutMs: 10_000, intervalMs: 20 }).catch(() => undefined);
  return (await c.getBundle(job.jobId)).bundleUrl;
}

/** Bounded wait for a condition (the bundle downloads behind the served version). */
async function holds(f: () => Promise<boolean>, ms = 20_000): Promise<void> {
  await until(f, { timeoutMs: ms, intervalMs: 50 });
}

const ready = async (url: string) => {
  const r = await fetch(url + '/_airlock/ready');
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

describe('airlock serve --values', () => {
  it('no network: a pinned version already in the store is served without touching bundleUrl; unknown keys warned by path; flags win', async () => {
    const { values } = await setup(
      `staticExport:\n  enabled: true\n  bundleUrl: http://127.0.0.1:1/bundle.tar.gz\n  version: v1\n  colour: red\nstore: STORE\nport: 1\nextra: 1\n`,
    );
    const s = await start(['serve', '--values', values, '--port', '0']);
    running.push(s);
    expect(s.url).not.toMatch(/:1$/);
    expect((await fetch(s.url + '/')).headers.get('x-airlock-version')).toBe('v1');
    expect(await ready(s.url)).toMatchObject({ status: 200, body: { status: 'ready', version: 'v1' } });
    expect(s.stderr()).toContain('unknown key staticExport.colour');
    expect(s.stderr()).toContain('unknown key extra');
    expect(s.stderr()).not.toContain('downloading');
  });

  it('wrong types: exit 2 naming the key', async () => {
    const { values } = await setup('port: eighty\nstaticExport:\n  enabled: "yes"\n');
    const r = await run(['serve', '--values', values]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('port');
    expect(r.stderr).toContain('staticExport.enabled');
  });

  it("unpinned: downloads the service's raw bundle, imports it as bundle-<sha> and serves it; ready 200", async () => {
    const { values, store } = await setup(
      `staticExport:\n  bundleUrl: ${await bundleLink()}\n  allowUnsigned: true\n  domain: docs.example.com\nstore: STORE\n`,
    );
    const s = await start(['serve', '--values', values, '--port', '0']);
    running.push(s);
    // The store's v1 is served while the bundle downloads; the import activates the new version.
    await holds(async () => /^bundle-/.test((await readState(store)).active ?? ''));
    const active = (await readState(store)).active!;
    expect(active).toMatch(/^bundle-[0-9a-f]{12}$/);
    await holds(async () => (await fetch(s.url + '/')).headers.get('x-airlock-version') === active, 5_000);
    expect((await fetch(s.url + '/')).headers.get('x-airlock-version')).toBe(active);
    expect((await ready(s.url)).status).toBe(200);
    expect(s.stderr()).not.toMatch(/X-Amz-Signature=|sig=/); // the link's credential is never logged
  });

  it('raw archive without staticExport.allowUnsigned and nothing in the store: exit 4, store unchanged', async () => {
    const { values, store } = await setup(`staticExport:\n  bundleUrl: ${await bundleLink()}\nstore: STORE\n`, false);
    const r = await run(['serve', '--values', values, '--port', '0']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('allowUnsigned');
    expect(await listVersions(store)).toEqual([]);
  });

  it('unreachable bundleUrl with an active version: serves it and says so loudly (stderr and /_airlock/ready)', async () => {
    const { values } = await setup('staticExport:\n  bundleUrl: http://127.0.0.1:1/bundle.tar.gz\n  allowUnsigned: true\nstore: STORE\n');
    const s = await start(['serve', '--values', values, '--port', '0'], {}, 40_000);
    running.push(s);
    expect((await ready(s.url)).status).toBe(200); // at once: v1 is served while the download is tried
    await holds(async () => /SERVING THE PREVIOUSLY ACTIVE VERSION v1[\s\S]*\*{20,}/.test(s.stderr()), 40_000);
    expect(s.stderr()).toMatch(/\*{20,}[\s\S]*WARNING[\s\S]*SERVING THE PREVIOUSLY ACTIVE VERSION v1[\s\S]*\*{20,}/);
    const r = await ready(s.url);
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body.warning)).toContain('PREVIOUSLY ACTIVE VERSION v1');
  }, 45_000);

  it('evil archive (zip-slip style ../ entry) with an active version: falls back, store keeps exactly v1', async () => {
    const evil = join(t.dir, 'evil.tar.gz');
    await writeFile(evil, tgz([...siteFiles(), { name: '../evil.txt', data: 'pwned' }]));
    emu.setFaults({ serveArchive: [{ domain: 'docs.example.com', path: evil }] });
    const { values, store } = await setup(`staticExport:\n  bundleUrl: ${await bundleLink()}\n  allowUnsigned: true\nstore: STORE\n`);
    const s = await start(['serve', '--values', values, '--port', '0']);
    running.push(s);
    await holds(async () => s.stderr().includes('AIRLOCK_UNSAFE'));
    expect((await listVersions(store)).map((v) => v.version)).toEqual(['v1']);
    expect((await ready(s.url)).body.warning).toBeDefined();
  });

  it('evil archive and nothing to fall back on: exit 4, no version imported', async () => {
    const evil = join(t.dir, 'evil2.tar.gz');
    await writeFile(evil, tgz([...siteFiles(), { name: '/etc/evil', data: 'pwned' }]));
    emu.setFaults({ serveArchive: [{ domain: 'docs.example.com', path: evil }] });
    const { values, store } = await setup(`staticExport:\n  bundleUrl: ${await bundleLink()}\n  allowUnsigned: true\nstore: STORE\n`, false);
    const r = await run(['serve', '--values', values, '--port', '0']);
    expect(r.code).toBe(4);
    expect(await listVersions(store)).toEqual([]);
  });

  it('corrupt compressed bundle: exit 4 naming the bundle by its link (without the query), never the partial file in downloads/', async () => {
    const bad = Buffer.from(tgz(siteFiles()));
    bad.fill(0x55, 60, 90);
    const corrupt = join(t.dir, 'corrupt.tar.gz');
    await writeFile(corrupt, bad);
    emu.setFaults({ serveArchive: [{ domain: 'docs.example.com', path: corrupt }] });
    const link = await bundleLink();
    const { values, store } = await setup(`staticExport:\n  bundleUrl: ${link}\n  allowUnsigned: true\nstore: STORE\n`, false);
    const r = await run(['serve', '--values', values, '--port', '0']);
    expect(r.code).toBe(4);
    const u = new URL(link);
    expect(r.stderr).toContain(`malformed archive "${u.origin}${u.pathname}": corrupt compressed data. The bundle itself was refused`);
    expect(r.stderr).toMatch(/\[AIRLOCK_CORRUPT\]\n$/);
    expect(r.stderr).not.toMatch(/\.part|downloads\//);
    expect(r.stderr).not.toContain(u.search.slice(1));
    expect(await listVersions(store)).toEqual([]);
  });

  it('truncated object (MD5 ETag disagrees) and pinned version: exit 4, advice printed, nothing imported', async () => {
    emu.setFaults({ truncateObjectAt: 1000 });
    const { values, store } = await setup(`staticExport:\n  bundleUrl: ${await bundleLink()}\n  version: v7\n  allowUnsigned: true\nstore: STORE\n`);
    const r = await run(['serve', '--values', values, '--port', '0']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/pinned version v7 is not in store/);
    expect((await listVersions(store)).map((v) => v.version)).toEqual(['v1']);
  });

  it('expired link and an empty store: exit 1 telling to regenerate the link', async () => {
    emu.setFaults({ linkLifetimeSeconds: 0 });
    const { values } = await setup(`staticExport:\n  bundleUrl: ${await bundleLink()}\n  allowUnsigned: true\nstore: STORE\n`, false);
    const r = await run(['serve', '--values', values, '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/nothing to serve[\s\S]*regenerate/);
  });

  it('a pinned version neither in the store nor downloadable (no bundleUrl): exit 1 with advice', async () => {
    const { values } = await setup('staticExport:\n  version: v9\nstore: STORE\n');
    const r = await run(['serve', '--values', values, '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/pinned version v9 is not in store .*airlock import/);
  });

  it('readiness: 503 while the bundle downloads (health 200), 200 once served', async () => {
    emu.setFaults({ throttleBytesPerSec: 6 * 1024 });
    const { values } = await setup(`staticExport:\n  bundleUrl: ${await bundleLink()}\n  allowUnsigned: true\nstore: STORE\n`, false);
    let boot: string | undefined;
    const pending = start(['serve', '--values', values, '--port', '0'], {}, 30_000, (err) => {
      boot ??= /starting at (http:\/\/[^/\s]+)\//.exec(err)?.[1];
    });
    pending.catch(() => {});
    await until(() => boot !== undefined, { timeoutMs: 5000, intervalMs: 10 }).catch(() => undefined);
    expect(boot).toBeDefined();
    expect((await ready(boot!)).status).toBe(503);
    expect((await fetch(boot! + '/_airlock/health')).status).toBe(200);
    expect((await fetch(boot! + '/')).status).toBe(503);
    const s = await pending;
    running.push(s);
    expect(s.url).toBe(boot);
    expect((await ready(s.url)).status).toBe(200);
  }, 40_000);
});
