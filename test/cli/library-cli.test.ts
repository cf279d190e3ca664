import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { airlock, airlockAsync, startServer, stopAll } from '../helpers/bin.js';
import { until } from '../helpers/wait.js';
import { get } from '../serve/helpers.js';
import { hashToken } from '../../src/mirror/index.js';
import { buildPackage, makeKey, makeTempDir, type TestKey } from '../store/helpers.js';

/**
 * A library: one store per site (LIB/DOMAIN), each with its own trust; the store commands take
 * --library LIB --site DOMAIN; serve --library serves every site by Host and by path prefix.
 */
let dir: string;
let lib: string;
let vendor: TestKey;
let other: TestKey;
const pkgs: Record<string, string> = {};
const SITES = ['docs.alpha.example', 'docs.beta.example', 'gamma.example'];

const page = (site: string, v: string, title: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><h1>${site} ${v}</h1><a href="/guide">guide</a></body></html>`;

beforeAll(async () => {
  dir = await makeTempDir('airlock-library-cli-');
  lib = join(dir, 'lib');
  vendor = await makeKey(dir, 'vendor');
  other = await makeKey(dir, 'other');
  for (const site of SITES) {
    for (const v of ['v1', 'v2']) {
      const key = site === 'gamma.example' ? other : vendor;
      await mkdir(join(dir, `${site}-${v}`));
      pkgs[`${site}-${v}`] = await buildPackage(join(dir, `${site}-${v}`), {
        version: v,
        domain: site,
        key,
        files: {
          'index.html': page(site, v, `Home of ${site}`),
          'guide.html': `<title>Guide</title><p>${site} guide ${v}</p>`,
          'app.css': `/* ${site} ${v} */`,
        },
      });
    }
  }
  await mkdir(join(dir, 'gamma-by-vendor'));
  pkgs['gamma-by-vendor'] = await buildPackage(join(dir, 'gamma-by-vendor'), {
    version: 'v3',
    domain: 'gamma.example',
    key: vendor,
    files: { 'index.html': page('gamma.example', 'v3', 'x') },
  });
  // gamma's store admits only "other"'s key, by its own trust policy.
  const init = airlock(['trust', 'init', '--library', lib, '--site', 'gamma.example', '--key', `other=${other.pubPath}`, '--threshold', '1']);
  expect(init.status, init.stderr).toBe(0);
  for (const site of SITES) {
    const trust = site === 'gamma.example' ? [] : ['--trust', vendor.pubPath]; // gamma: its policy's keys only
    const r = airlock(['import', pkgs[`${site}-v1`]!, '--library', lib, ...trust, '--activate', '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ store: join(lib, site), version: 'v1', activated: true });
  }
}, 60_000);
afterEach(() => stopAll());
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a library of stores', () => {
  it("import --library puts each package into the store of its own domain; one site's trust never admits another's packages", () => {
    expect(SITES.every((s) => existsSync(join(lib, s, 'versions', 'v1')))).toBe(true);
    // gamma's policy holds only "other": gamma's package signed by the vendor's key is refused there (exit 4).
    const byVendor = airlock(['import', pkgs['gamma-by-vendor']!, '--library', lib]);
    expect(byVendor.status, byVendor.stderr).toBe(4);
    expect(existsSync(join(lib, 'gamma.example', 'versions', 'v3'))).toBe(false);
    const intoGamma = airlock(['import', pkgs['gamma.example-v2']!, '--library', lib, '--json']);
    expect(intoGamma.status, intoGamma.stderr).toBe(0);
    const list = airlock(['list', '--library', lib, '--site', 'GAMMA.example.', '--json']);
    expect(list.status, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { versions: Array<{ version: string }> }).versions.map((v) => v.version).sort()).toEqual(['v1', 'v2']);
  });

  it('the store commands name a site with --site; a library of several sites needs it; a site it does not hold is named', () => {
    const many = airlock(['list', '--library', lib]);
    expect(many.status).toBe(2);
    expect(many.stderr).toContain(`holds 3 sites; choose one with --site (${SITES.join(', ')})`);
    const none = airlock(['activate', 'v1', '--library', lib, '--site', 'nope.example']);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('has no site nope.example; it holds');
    expect(none.stderr).toContain('[AIRLOCK_NO_SITE]');
    const bad = airlock(['list', '--library', lib, '--site', '../gamma.example']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("is not a site's domain");
    const both = airlock(['list', '--library', lib, '--store', join(lib, 'gamma.example')]);
    expect(both.status).toBe(2);
    expect(airlock(['audit', 'verify', '--library', lib, '--site', 'gamma.example']).status).toBe(0);
    expect(airlock(['trust', 'show', '--library', lib, '--site', 'gamma.example', '--json']).stdout).toContain('"serial": 1');
  });
});

describe('a library under hostile input', () => {
  it('a package whose domain is spelt in upper case is refused, so a per-domain rule (threshold, seen order, site) is never side-stepped by another spelling', async () => {
    await mkdir(join(dir, 'upper'));
    const upper = await buildPackage(join(dir, 'upper'), { version: 'v9', domain: 'GAMMA.example', key: other, files: { 'index.html': page('x', 'v9', 'x') } });
    const r = airlock(['import', upper, '--library', lib]);
    expect(r.status).toBe(4);
    expect(r.stderr).toContain('must be a host name in lower case');
    expect(existsSync(join(lib, 'gamma.example', 'versions', 'v9'))).toBe(false);
  });

  it('an address or a single label is no site: refused as a package domain and as --site, never a site of serve', async () => {
    for (const domain of ['127.0.0.1', 'localhost']) {
      await mkdir(join(dir, `addr-${domain}`));
      const pkg = await buildPackage(join(dir, `addr-${domain}`), { version: 'v1', domain, key: vendor, files: { 'index.html': page('x', 'v1', 'x') } });
      const r = airlock(['import', pkg, '--library', lib, '--trust', vendor.pubPath]);
      expect(r.status, domain).toBe(2);
      expect(r.stderr).toContain("is not a site's domain");
      expect(existsSync(join(lib, domain))).toBe(false);
      expect(airlock(['list', '--library', lib, '--site', domain]).status).toBe(2);
    }
  });

  it('a library entry that is a link is no site: never followed by --site, import or trust init', async () => {
    const linked = join(dir, 'linked-lib');
    await mkdir(linked);
    await symlink(join(lib, 'docs.alpha.example'), join(linked, 'docs.link.example'));
    const listed = airlock(['list', '--library', linked, '--site', 'docs.link.example']);
    expect(listed.status).toBe(2);
    expect(listed.stderr).toContain("is a symbolic link, not a site's store folder");
    await mkdir(join(dir, 'link-pkg'));
    const pkg = await buildPackage(join(dir, 'link-pkg'), {
      version: 'v7',
      domain: 'docs.link.example',
      key: vendor,
      files: { 'index.html': page('x', 'v7', 'x') },
    });
    expect(airlock(['import', pkg, '--library', linked, '--trust', vendor.pubPath, '--activate']).status).toBe(2);
    expect(existsSync(join(lib, 'docs.alpha.example', 'versions', 'v7'))).toBe(false);
  });
});

describe('serve --library', () => {
  it('serves each site by Host (any case, a port, a trailing dot) and by path prefix; an unknown host gets the library, never a site', async () => {
    const s = await startServer(['serve', '--library', lib, '--port', '0', '--site-host', 'alpha.intranet=docs.alpha.example']);
    const port = new URL(s.url).port;
    const home = await get(s.url + '/', { Host: `DOCS.Beta.Example.:${port}` });
    expect(home.body.toString()).toContain('<h1>docs.beta.example v1</h1>');
    expect((await get(s.url + '/guide', { Host: 'alpha.intranet' })).body.toString()).toContain('docs.alpha.example guide v');
    // By path: the prefix is taken off; the site's own redirects keep it; its root-relative links come back under it.
    expect((await get(s.url + '/gamma.example/guide')).body.toString()).toContain('gamma.example guide v1');
    expect((await get(s.url + '/gamma.example')).headers.location).toBe('/gamma.example/');
    const slash = await get(s.url + '/gamma.example/guide/'); // the site's own redirect, under its prefix
    expect([slash.status, slash.headers.location, slash.headers['referrer-policy']]).toEqual([308, '/gamma.example/guide', 'same-origin']);
    const back = await get(s.url + '/guide', { Referer: `${s.url}/gamma.example/` });
    expect([back.status, back.headers.location]).toEqual([308, '/gamma.example/guide']);
    // An unknown host: the landing page at /, and 404 (not another site's page) elsewhere.
    const landing = await get(s.url + '/', { Host: 'unknown.example' });
    expect(landing.status).toBe(200);
    for (const site of SITES) expect(landing.body.toString()).toContain(`<a href="/${site}/"><bdi>Home of ${site}</bdi></a>`);
    expect((await get(s.url + '/guide', { Host: 'unknown.example' })).status).toBe(404);
    const json = JSON.parse((await get(s.url + '/_airlock/library')).body.toString()) as {
      sites: Array<{ domain: string; version: string; title: string; pages: number }>;
    };
    expect(json.sites.map((x) => [x.domain, x.title, x.pages])).toEqual(SITES.map((x) => [x, `Home of ${x}`, 2]));
    // A site added while serving is served; a folder that is no site is not.
    await mkdir(join(dir, 'delta-pkg'));
    const added = await buildPackage(join(dir, 'delta-pkg'), {
      version: 'v1',
      domain: 'delta.example',
      key: vendor,
      files: { 'index.html': page('delta.example', 'v1', 'Delta') },
    });
    await writeFile(join(lib, 'README.txt'), 'not a site');
    expect(airlock(['import', added, '--library', lib, '--trust', vendor.pubPath, '--activate']).status).toBe(0);
    await until(async () => (await get(s.url + '/', { Host: 'delta.example' })).body.toString().includes('<h1>delta.example v1</h1>'), { timeoutMs: 10_000 });
    expect(s.stderr()).toContain('README.txt is a file, not a site');
    expect(await s.stop()).toBe(0);
  }, 60_000);

  it('a switch of one site under load: 0 failed requests on every site, the switched one answering from one version per response', async () => {
    const s = await startServer(['serve', '--library', lib, '--port', '0']);
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const hit = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(s.url + path, { agent }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
        req.on('error', reject);
        req.end();
      });
    const seen = new Map<string, Set<string>>(SITES.map((x) => [x, new Set()]));
    let failed = 0;
    let done = false;
    const hammer = async (site: string) => {
      for (let i = 0; !done && i < 20_000; i++) {
        const r = await hit(`/${site}/`).catch(() => ({ status: 0, body: '' }));
        const v = /<h1>\S+ (v\d)<\/h1>/.exec(r.body)?.[1];
        if (r.status !== 200 || v === undefined) failed++;
        else seen.get(site)!.add(v);
      }
    };
    const load = SITES.map(hammer);
    await until(() => [...seen.values()].every((v) => v.size > 0), { timeoutMs: 10_000 });
    const beta = { library: ['--library', lib, '--site', 'docs.beta.example'] };
    // Imported and activated while every site is being asked for (the test's loop keeps running).
    expect((await airlockAsync(['import', pkgs['docs.beta.example-v2']!, ...beta.library.slice(0, 2), '--trust', vendor.pubPath])).status).toBe(0);
    expect((await airlockAsync(['activate', 'v2', ...beta.library])).status).toBe(0);
    await until(() => seen.get('docs.beta.example')!.has('v2'), { timeoutMs: 10_000 });
    done = true;
    await Promise.all(load);
    agent.destroy();
    expect(failed).toBe(0);
    expect([...seen.get('docs.beta.example')!].sort()).toEqual(['v1', 'v2']);
    expect([...seen.get('gamma.example')!]).toEqual(['v1']);
    expect(await s.stop()).toBe(0);
  }, 60_000);

  it("a values file gives a site its own settings (a pinned version, its features, more host names); the others keep the library's", async () => {
    const r = airlock(['import', pkgs['docs.beta.example-v2']!, '--library', lib, '--trust', vendor.pubPath, '--activate']);
    expect(r.status, r.stderr).toBe(0);
    const values = join(dir, 'library-values.yaml');
    await writeFile(
      values,
      [
        'features:',
        '  local-search: true',
        'library:',
        '  sites:',
        '    - domain: docs.beta.example',
        '      version: v1',
        '    - domain: DOCS.Alpha.Example',
        '      hosts: [alpha-values.intranet]',
        '      features:',
        '        local-search: false',
        '',
      ].join('\n'),
    );
    const s = await startServer(['serve', '--library', lib, '--values', values, '--port', '0']);
    // beta is pinned to v1 although v2 is active, and listed so.
    expect((await get(s.url + '/', { Host: 'docs.beta.example' })).body.toString()).toContain('<h1>docs.beta.example v1</h1>');
    const listing = JSON.parse((await get(s.url + '/_airlock/library')).body.toString()) as { sites: Array<{ domain: string; version: string }> };
    expect(listing.sites.find((x) => x.domain === 'docs.beta.example')!.version).toBe('v1');
    const features = async (host: string) =>
      (JSON.parse((await get(s.url + '/_airlock/features', { Host: host })).body.toString()) as { features: { localSearch: boolean } }).features.localSearch;
    expect(await features('alpha-values.intranet')).toBe(false);
    expect(await features('docs.alpha.example')).toBe(false);
    expect(await features('gamma.example')).toBe(true);
    expect(await s.stop()).toBe(0);
    // Refused before anything listens, naming the file, the entry and the site.
    const twice = join(dir, 'twice.yaml');
    await writeFile(twice, 'library:\n  sites:\n    - domain: gamma.example\n    - domain: Gamma.Example.\n');
    const t = airlock(['serve', '--library', lib, '--values', twice, '--port', '0']);
    expect([t.status, t.stderr]).toEqual([2, expect.stringContaining('library.sites[1]: gamma.example has an entry already (library.sites[0])')]);
    const clash = join(dir, 'clash.yaml');
    await writeFile(
      clash,
      'library:\n  sites:\n    - domain: gamma.example\n      hosts: [shared.intranet]\n    - domain: docs.alpha.example\n      hosts: [shared.intranet]\n',
    );
    const c = airlock(['serve', '--library', lib, '--values', clash, '--port', '0']);
    expect([c.status, c.stderr]).toEqual([2, expect.stringContaining('shared.intranet already reaches gamma.example')]);
    const oneStore = join(dir, 'one-store.yaml');
    await writeFile(oneStore, 'staticExport:\n  bundleUrl: http://127.0.0.1:1/x.tar.gz\n');
    const o = airlock(['serve', '--library', lib, '--values', oneStore, '--port', '0']);
    expect([o.status, o.stderr]).toEqual([2, expect.stringContaining("staticExport set up one store's server")]);
    const badFeature = join(dir, 'bad-feature.yaml');
    await writeFile(
      badFeature,
      'library:\n  sites:\n    - domain: gamma.example\n      deployment:\n        type: air-gapped\n      features:\n        search: true\n',
    );
    const f = airlock(['serve', '--library', lib, '--values', badFeature, '--port', '0']);
    expect(f.status).toBe(2);
    expect(f.stderr).toContain('library.sites[0] (gamma.example)');
  }, 60_000);

  it('a host name the operator maps wins over a site whose domain it is (imported later, or there at start): that site is reached by its path, said once', async () => {
    const s = await startServer(['serve', '--library', lib, '--port', '0', '--site-host', 'gamma.example=docs.alpha.example']);
    expect((await get(s.url + '/guide', { Host: 'gamma.example' })).body.toString()).toContain('docs.alpha.example guide');
    expect((await get(s.url + '/gamma.example/guide')).body.toString()).toContain('gamma.example guide');
    await until(async () => s.stderr().includes('site gamma.example: its domain is a host name mapped to docs.alpha.example'), { timeoutMs: 5_000 });
    // A package for a mapped name imported while serving: the same, said once.
    await mkdir(join(dir, 'alias-pkg'));
    const alias = await buildPackage(join(dir, 'alias-pkg'), {
      version: 'x1',
      domain: 'alpha.alias.example',
      key: vendor,
      files: { 'index.html': page('alpha.alias.example', 'x1', 'Alias') },
    });
    await s.stop();
    const t = await startServer(['serve', '--library', lib, '--port', '0', '--site-host', 'alpha.alias.example=docs.alpha.example']);
    expect(airlock(['import', alias, '--library', lib, '--trust', vendor.pubPath, '--activate']).status).toBe(0);
    await until(async () => t.stderr().includes('site alpha.alias.example: its domain is a host name mapped to docs.alpha.example'), { timeoutMs: 10_000 });
    expect((await get(t.url + '/', { Host: 'alpha.alias.example' })).body.toString()).toContain('<h1>docs.alpha.example');
    expect(t.stderr().split('its domain is a host name mapped').length).toBe(2);
    expect(await t.stop()).toBe(0);
    // And a restart with that site there starts (it was refused: one import took the whole library down at the next start).
    const u = await startServer(['serve', '--library', lib, '--port', '0', '--site-host', 'alpha.alias.example=docs.alpha.example']);
    expect(await u.stop()).toBe(0);
  }, 60_000);

  it('--mirror: every site hands out its own packages (by path and by Host), signed as imported; a link of one site never opens another', async () => {
    const token = 'svc_mirror_' + 'l'.repeat(24);
    const tokens = join(dir, 'library-tokens');
    await writeFile(tokens, `${hashToken(token)}\n`);
    const s = await startServer(['serve', '--library', lib, '--port', '0', '--mirror', '--mirror-tokens', tokens]);
    const out = join(dir, 'from-library-mirror');
    const f = await airlockAsync(
      ['fetch', '--domain', 'docs.alpha.example', '--api-url', `${s.url}/docs.alpha.example`, '--out', out, '--trust', vendor.pubPath, '--json'],
      { env: { AIRLOCK_ADMIN_KEY: token }, timeoutMs: 30_000 },
    );
    expect(f.status, f.stderr).toBe(0);
    const got = JSON.parse(f.stdout) as { package: string; signed: boolean; version: string };
    expect(got).toMatchObject({ signed: true, version: 'v1' });
    expect((await readFile(got.package)).equals(await readFile(pkgs['docs.alpha.example-v1']!))).toBe(true);
    // By Host: the links carry no prefix; a site has only its own domain's versions.
    const api = (path: string, host: string, body?: unknown) =>
      new Promise<{ status: number; json: () => Promise<unknown> }>((resolve, reject) => {
        const data = body === undefined ? '' : JSON.stringify(body);
        const req = request(
          `${s.url}${path}`,
          {
            method: 'POST',
            headers: { host, authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, json: async () => JSON.parse(Buffer.concat(chunks).toString()) as unknown }));
          },
        );
        req.on('error', reject);
        req.end(data);
      });
    const job = (await (await api('/v1/static-export/jobs', 'docs.beta.example', { domain: 'docs.beta.example' })).json()) as { jobId: string };
    const link = (await (await api(`/v1/static-export/jobs/${job.jobId}/bundle`, 'docs.beta.example')).json()) as { packageUrl: string };
    const label = /^\/_airlock\/objects\/(v[12])\/package\.airlock$/.exec(new URL(link.packageUrl).pathname)?.[1];
    expect(label).toBeDefined();
    const beta = await get(s.url + new URL(link.packageUrl).pathname + new URL(link.packageUrl).search, { Host: 'docs.beta.example' });
    expect(beta.status).toBe(200);
    expect(beta.body.equals(await readFile(pkgs[`docs.beta.example-${label}`]!))).toBe(true);
    // The same link (same label, same name) presented to another site: refused.
    const cross = await get(`${s.url}/gamma.example${new URL(link.packageUrl).pathname}${new URL(link.packageUrl).search}`);
    expect(cross.status).toBe(403);
    expect((await api('/v1/static-export/jobs', 'docs.beta.example', { domain: 'gamma.example' })).status).toBe(404);
    expect(await api('/v1/static-export/jobs', 'docs.beta.example', { domain: 'docs.beta.example' }).then((r) => r.status)).toBe(202);
    const noToken = await fetch(`${s.url}/docs.beta.example/v1/static-export/jobs`, { method: 'POST', body: '{}' });
    expect(noToken.status).toBe(401);
    // A replica follows one site of the library: its empty store gets that site's active version.
    // A replica of the whole library: every site of the mirror followed into its own store.
    const lib3 = join(dir, 'library-replica');
    const whole = await startServer(
      ['serve', '--library', lib3, '--follow', s.url, '--trust', vendor.pubPath, '--trust', other.pubPath, '--follow-poll-ms', '200', '--port', '0'],
      { env: { AIRLOCK_MIRROR_TOKEN: token }, timeoutMs: 30_000 },
    );
    await until(async () => (await get(whole.url + '/_airlock/ready')).status === 200, { timeoutMs: 30_000 });
    for (const site of SITES) expect((await get(whole.url + `/${site}/`)).status, `${site}\n${whole.stderr()}`).toBe(200);
    // A switch on the mirror's site: the replica's site follows it.
    expect(airlock(['import', pkgs['docs.beta.example-v2']!, '--library', lib, '--trust', vendor.pubPath]).status).toBe(0);
    const before = (await get(whole.url + '/', { Host: 'docs.beta.example' })).headers['x-airlock-version'];
    const next = before === 'v1' ? 'v2' : 'v1';
    expect(airlock(['activate', next, '--library', lib, '--site', 'docs.beta.example']).status).toBe(0);
    await until(async () => (await get(whole.url + '/', { Host: 'docs.beta.example' })).headers['x-airlock-version'] === next, { timeoutMs: 30_000 });
    expect(existsSync(join(lib3, 'docs.beta.example', 'versions', next))).toBe(true);
    expect(await whole.stop()).toBe(0);
    const replica = await startServer(
      [
        'serve',
        '--store',
        join(dir, 'alpha-replica'),
        '--follow',
        `${s.url}/docs.alpha.example`,
        '--trust',
        vendor.pubPath,
        '--follow-poll-ms',
        '200',
        '--port',
        '0',
      ],
      { env: { AIRLOCK_MIRROR_TOKEN: token }, timeoutMs: 30_000 },
    );
    expect((await get(replica.url + '/')).body.toString()).toContain('<h1>docs.alpha.example v1</h1>');
    expect(await replica.stop()).toBe(0);
    expect(await s.stop()).toBe(0);
    const alone = airlock(['serve', '--library', lib, '--port', '0', '--mirror']);
    expect([alone.status, alone.stderr]).toEqual([2, expect.stringContaining('--mirror and --mirror-tokens FILE go together')]);
  }, 60_000);

  it('library.sites[].staticExport: each site fetches its own bundle into its own store once the library listens; a package of another domain is refused, naming it', async () => {
    const raw = join(dir, 'raw-site');
    await mkdir(raw);
    await writeFile(join(raw, 'index.html'), '<!doctype html><title>Raw</title><h1>raw.example from its bundle</h1>');
    execFileSync('tar', ['-czf', join(dir, 'raw.tar.gz'), '-C', raw, '.']);
    const files: Record<string, Buffer> = {
      '/alpha.airlock': await readFile(pkgs['docs.alpha.example-v2']!),
      '/wrong.airlock': await readFile(pkgs['gamma.example-v1']!),
      '/raw.tar.gz': await readFile(join(dir, 'raw.tar.gz')),
    };
    files['/sign-in.airlock'] = Buffer.from('<!doctype html><title>Sign in</title><form>…</form>');
    let hold: (() => void) | null = null;
    const held = new Promise<void>((r) => (hold = r));
    const bucket = createServer((req, res) => {
      const path = (req.url ?? '').replace(/\?.*$/, '');
      // The first site's bundle is held until the test has seen the others wait for it.
      if (path === '/slow.airlock') return void held.then(() => res.writeHead(404).end());
      const body = files[path];
      res.writeHead(body ? 200 : 404, { 'content-length': body?.length ?? 0 });
      res.end(body);
    });
    await new Promise<void>((r) => bucket.listen(0, '127.0.0.1', r));
    const at = `http://127.0.0.1:${(bucket.address() as AddressInfo).port}`;
    try {
      const lib2 = join(dir, 'lib-bundles');
      await mkdir(lib2);
      const values = join(dir, 'library-bundles.yaml');
      await writeFile(
        values,
        [
          'library:',
          '  sites:',
          '    - domain: slow.example',
          `      staticExport: { bundleUrl: "${at}/slow.airlock", allowUnsigned: true }`,
          '    - domain: docs.alpha.example',
          // relative to the values file's folder
          `      staticExport: { bundleUrl: "${at}/alpha.airlock?X-Sig=secret", trust: ["${basename(vendor.pubPath)}"] }`,
          '    - domain: html.example',
          `      staticExport: { bundleUrl: "${at}/sign-in.airlock", trust: ["${basename(vendor.pubPath)}"] }`,
          '    - domain: raw.example',
          `      staticExport: { bundleUrl: "${at}/raw.tar.gz", allowUnsigned: true }`,
          '    - domain: docs.beta.example',
          `      staticExport: { bundleUrl: "${at}/wrong.airlock", trust: ["${other.pubPath}"] }`,
          '',
        ].join('\n'),
      );
      const s = await startServer(['serve', '--library', lib2, '--values', values, '--port', '0']);
      // Behind the first site's bundle, the others answer 503 saying why (not 404), and are listed; ready is 503.
      const waiting = await get(s.url + '/raw.example/');
      expect([waiting.status, waiting.body.toString()]).toEqual([503, 'site raw.example cannot be served: its bundle is being fetched\n']);
      const listed = JSON.parse((await get(s.url + '/_airlock/library')).body.toString()) as { sites: Array<{ domain: string; problem: string | null }> };
      expect(listed.sites.find((x) => x.domain === 'raw.example')).toMatchObject({ problem: 'its bundle is being fetched' });
      expect((await get(s.url + '/_airlock/ready')).status).toBe(503);
      hold!();
      await until(async () => (await get(s.url + '/', { Host: 'docs.alpha.example' })).body.toString().includes('<h1>docs.alpha.example v2</h1>'), {
        timeoutMs: 20_000,
      });
      await until(async () => (await get(s.url + '/raw.example/')).body.toString().includes('raw.example from its bundle'), { timeoutMs: 20_000 });
      await until(async () => s.stderr().includes('docs.beta.example: WARNING'), { timeoutMs: 20_000 });
      expect(s.stderr()).toMatch(
        /docs\.beta\.example: WARNING: its bundle .* could not be installed: AIRLOCK_DOMAIN_MISMATCH: the package at .* is of domain gamma\.example, not of site docs\.beta\.example/,
      );
      expect(s.stderr()).not.toContain('X-Sig=secret'); // a link's query is its credential
      // A page that is neither a package nor an archive is said to be so (never "unsigned by nature").
      await until(async () => s.stderr().includes('html.example: WARNING'), { timeoutMs: 20_000 });
      expect(s.stderr()).toMatch(/html\.example: WARNING: .*AIRLOCK_NOT_AN_ARCHIVE: .*not a tar, tar\.gz or zip archive/);
      const slow = await get(s.url + '/', { Host: 'slow.example' });
      expect([slow.status, slow.body.toString()]).toEqual([503, expect.stringContaining('its bundle could not be installed')]);
      expect((await get(s.url + '/_airlock/ready')).status).toBe(200); // every bundle tried
      expect((await get(s.url + '/', { Host: 'docs.beta.example' })).status).toBe(503);
      // The refused site's folder, made by this try, is gone: it is listed with why, not as a store with no version.
      expect(existsSync(join(lib2, 'docs.beta.example'))).toBe(false);
      const after = JSON.parse((await get(s.url + '/_airlock/library')).body.toString()) as { sites: Array<{ domain: string; problem: string | null }> };
      expect(after.sites.find((x) => x.domain === 'docs.beta.example')?.problem).toMatch(/^its bundle could not be installed: AIRLOCK_DOMAIN_MISMATCH: /);
      expect(await s.stop()).toBe(0);
      // Started again: each site serves what it has while its bundle is fetched again (unchanged).
      const again = await startServer(['serve', '--library', lib2, '--values', values, '--port', '0']);
      expect((await get(again.url + '/', { Host: 'docs.alpha.example' })).body.toString()).toContain('<h1>docs.alpha.example v2</h1>');
      await until(async () => again.stderr().includes('docs.alpha.example: already had version v2'), { timeoutMs: 20_000 });
      expect(await again.stop()).toBe(0);
      // A trust key that cannot be read is the values file's fault: refused before anything listens, naming the entry.
      await mkdir(join(dir, 'folder.pub'));
      await writeFile(values, (await readFile(values, 'utf8')).replace(`trust: ["${basename(vendor.pubPath)}"] }`, 'trust: ["folder.pub"] }'));
      const bad = airlock(['serve', '--library', lib2, '--values', values, '--port', '0']);
      expect([bad.status, bad.stderr]).toEqual([
        2,
        expect.stringMatching(/library\.sites \(docs\.alpha\.example\): staticExport\.trust: .*folder\.pub is a folder/),
      ]);
    } finally {
      bucket.close();
    }
  }, 90_000);

  it('--follow a mirror listing more sites than are followed: the first 1,000, said once; the server stays responsive and stops at once', async () => {
    let polls = 0;
    const listing = JSON.stringify({ sites: Array.from({ length: 1005 }, (_, i) => ({ domain: `s${i}.example` })) });
    const hostile = createServer((req, res) => {
      req.resume();
      if (req.url === '/_airlock/library') return void res.writeHead(200, { 'content-type': 'application/json' }).end(listing);
      polls++;
      res.writeHead(403, { 'content-type': 'application/json' }).end('{"error":"no"}');
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    try {
      const s = await startServer(
        ['serve', '--library', join(dir, 'lib-many'), '--follow', `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`, '--port', '0'],
        { env: { AIRLOCK_MIRROR_TOKEN: 'svc_mirror_' + 'm'.repeat(24) }, timeoutMs: 30_000 },
      );
      await until(async () => s.stderr().includes('the mirror lists 1005 sites; the first 1000 are followed, the rest not'), { timeoutMs: 20_000 });
      await until(() => polls >= 1000, { timeoutMs: 30_000 });
      const t0 = Date.now();
      expect((await get(s.url + '/_airlock/health')).status).toBe(200);
      expect(Date.now() - t0).toBeLessThan(3000);
      expect((await get(s.url + '/_airlock/ready')).status).toBe(503); // no site has a version
      expect(s.stderr()).not.toContain('s1004.example');
      const stop = Date.now();
      expect(await s.stop()).toBe(0);
      expect(Date.now() - stop).toBeLessThan(10_000);
    } finally {
      hostile.closeAllConnections();
      hostile.close();
    }
  }, 90_000);

  it('--follow: a refused package is named in ready and tried again when the mirror moves on; a site with no version does not hold readiness; a site the mirror drops is no longer followed', async () => {
    const { createHash } = await import('node:crypto');
    const good = await readFile(pkgs['docs.alpha.example-v2']!);
    const wrong = await readFile(pkgs['gamma.example-v1']!); // another domain's package: refused
    let fixed = false; // the mirror's operator puts the right package up
    let listed = ['docs.alpha.example', 'docs.beta.example', 'gamma.example'];
    const polls: Record<string, number> = {};
    const pkgHits = new Map<string, number>();
    let base = '';
    const answer = (version: string | null, bytes: Buffer | null, d: string) => ({
      version,
      packageSha256: bytes && createHash('sha256').update(bytes).digest('hex'),
      packageUrl: bytes && `${base}/${d}/pkg/${version}`,
      phase: version === null ? 'none' : 'switch',
      activateInMs: version === null ? null : 0,
      activateAt: null,
      held: null,
      replicas: 1,
      prepared: 0,
    });
    const mirror = createServer((req, res) => {
      req.resume();
      const url = req.url ?? '';
      const json = (o: unknown) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(o));
      if (url === '/_airlock/library') return json({ sites: listed.map((domain) => ({ domain })) });
      const d = url.split('/')[1]!;
      if (url.includes('/pkg/')) pkgHits.set(url, (pkgHits.get(url) ?? 0) + 1);
      if (url.includes('/pkg/')) return void res.writeHead(200).end(url.endsWith('/v1') ? wrong : good);
      polls[d] = (polls[d] ?? 0) + 1;
      if (d === 'docs.alpha.example') return json(fixed ? answer('v2', good, d) : answer('v1', wrong, d));
      if (d === 'gamma.example') return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"no active version"}'); // as a mirror says it
      return json(answer(null, null, d)); // beta: no active version on the mirror
    });
    await new Promise<void>((r) => mirror.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}`;
    try {
      const s = await startServer(
        ['serve', '--library', join(dir, 'lib-follow-refused'), '--follow', base, '--trust', vendor.pubPath, '--follow-poll-ms', '100', '--port', '0'],
        { env: { AIRLOCK_MIRROR_TOKEN: 'svc_mirror_' + 'm'.repeat(24) }, timeoutMs: 30_000 },
      );
      // Both sites tried, neither with a version: not ready (a replica serving nothing), saying why; the refusal is named.
      type Ready = {
        preparing?: string[];
        follow: { sites: number; withProblems: number; problems?: Record<string, { refused: { version: string; reason: string } | null }> };
      };
      let ready: Ready = { follow: { sites: 0, withProblems: 0 } };
      await until(async () => (ready = JSON.parse((await get(s.url + '/_airlock/ready')).body.toString()) as Ready).follow?.withProblems === 2, {
        timeoutMs: 20_000,
      });
      await until(async () => ((ready = JSON.parse((await get(s.url + '/_airlock/ready')).body.toString()) as Ready).preparing ?? []).length === 1, {
        timeoutMs: 20_000,
      });
      expect(ready.preparing).toEqual(["a version of one of the mirror's sites"]); // not beta nor gamma: the mirror has no version of them
      expect(ready.follow).toMatchObject({ sites: 3, withProblems: 2 });
      expect(ready.follow.problems!['docs.alpha.example']!.refused).toMatchObject({
        version: 'v1',
        reason: expect.stringContaining('AIRLOCK_DOMAIN_MISMATCH'),
      });
      expect((await get(s.url + '/_airlock/ready')).status).toBe(503);
      // The mirror moves on to another version: the refused site is tried again, filled, and the replica is ready, the refusal history.
      fixed = true;
      await until(async () => (await get(s.url + '/docs.alpha.example/')).status === 200, { timeoutMs: 20_000 });
      await until(async () => (await get(s.url + '/_airlock/ready')).status === 200, { timeoutMs: 20_000 });
      expect((JSON.parse((await get(s.url + '/_airlock/ready')).body.toString()) as Ready).follow.problems).not.toHaveProperty('docs.alpha.example');
      await new Promise((r) => setTimeout(r, 500)); // polls at 100 ms: a follower that did not know it serves v2 would fetch it again
      expect(pkgHits.get('/docs.alpha.example/pkg/v2')).toBe(1);
      // The mirror drops beta: no longer followed (its polls stop), said once.
      listed = ['docs.alpha.example'];
      await until(async () => s.stderr().includes('docs.beta.example: follow: the mirror no longer lists this site'), { timeoutMs: 30_000 });
      const after = polls['docs.beta.example']!;
      await new Promise((r) => setTimeout(r, 1000));
      expect(polls['docs.beta.example']! - after).toBeLessThanOrEqual(1); // one poll may have been under way
      expect((await get(s.url + '/_airlock/ready')).status).toBe(200);
      expect(await s.stop()).toBe(0);
    } finally {
      mirror.closeAllConnections();
      mirror.close();
    }
  }, 90_000);

  it('a link in the library is never written through, by a bundle or a follower; a follow URL carrying a secret is refused', async () => {
    const lib4 = join(dir, 'lib-links');
    const outside = join(dir, 'outside-of-library');
    await mkdir(lib4);
    await mkdir(outside);
    await symlink(outside, join(lib4, 'docs.alpha.example'));
    const values = join(dir, 'library-links.yaml');
    await writeFile(
      values,
      `library:\n  sites:\n    - domain: docs.alpha.example\n      staticExport: { bundleUrl: "http://127.0.0.1:9/a.airlock", allowUnsigned: true }\n`,
    );
    const s = await startServer(['serve', '--library', lib4, '--values', values, '--port', '0']);
    await until(async () => s.stderr().includes('docs.alpha.example: WARNING'), { timeoutMs: 20_000 });
    expect(s.stderr()).toMatch(/docs\.alpha\.example is a symbolic link.*not a site's store folder/);
    expect(await s.stop()).toBe(0);
    expect(await readdir(outside)).toEqual([]);
    // A follower restarted while its mirror is down, with sites here: they are served, and it is ready.
    const lib5 = join(dir, 'lib-follow-down');
    await mkdir(lib5);
    expect(airlock(['import', pkgs['docs.alpha.example-v1']!, '--library', lib5, '--trust', vendor.pubPath, '--activate']).status).toBe(0);
    const down = await startServer(['serve', '--library', lib5, '--follow', 'http://127.0.0.1:9', '--port', '0'], {
      env: { AIRLOCK_MIRROR_TOKEN: 'svc_mirror_' + 'm'.repeat(24) },
    });
    await until(async () => (await get(down.url + '/_airlock/ready')).status === 200, { timeoutMs: 20_000 });
    expect((await get(down.url + '/docs.alpha.example/')).status).toBe(200);
    expect(await down.stop()).toBe(0);
    for (const url of ['http://user:pw@127.0.0.1:9', 'http://127.0.0.1:9/?token=x', 'http://127.0.0.1:9/#x']) {
      const r = airlock(['serve', '--library', lib4, '--follow', url, '--port', '0'], { env: { AIRLOCK_MIRROR_TOKEN: 'svc_mirror_' + 'm'.repeat(24) } });
      expect([r.status, r.stderr], url).toEqual([2, expect.stringContaining('give it without a user, password, query or fragment')]);
      expect(r.stderr).not.toMatch(/pw@|token=x/);
    }
    // A followed site's versions are the mirror's: a pinned version or a bundle of its own is refused at start (it would fight the follower).
    for (const [entry, said] of [
      ['{ domain: docs.alpha.example, version: v1 }', 'a pinned version (v1)'],
      ['{ domain: docs.alpha.example, staticExport: { bundleUrl: "http://127.0.0.1:9/a.airlock", allowUnsigned: true } }', 'a bundle (staticExport)'],
    ]) {
      await writeFile(values, `library:\n  sites:\n    - ${entry}\n`);
      const r = airlock(['serve', '--library', lib5, '--values', values, '--follow', 'http://127.0.0.1:9', '--port', '0'], {
        env: { AIRLOCK_MIRROR_TOKEN: 'svc_mirror_' + 'm'.repeat(24) },
      });
      expect([r.status, r.stderr]).toEqual([2, expect.stringContaining(`the values file gives library.sites (docs.alpha.example) ${said}: remove it`)]);
    }
  }, 60_000);

  it('refuses options that belong to one store, and a host name mapped to two sites, naming them', async () => {
    const r = airlock(['serve', '--library', lib, '--version', 'v1', '--port', '0']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('does not take --version');
    const empty = airlock(['serve', '--library', '', '--port', '0']);
    expect([empty.status, empty.stderr]).toEqual([2, expect.stringContaining('--library is empty')]);
    // Search and assistant are relayed to the service, which a library does not do: on, they would show and never answer.
    const cloud = airlock(['serve', '--library', lib, '--port', '0', '--deployment', 'cloud']);
    expect([cloud.status, cloud.stderr]).toEqual([2, expect.stringContaining('search and assistant are on for the library (cloud) and would be relayed')]);
    // local-assistant answers on one store's server only for now: on, it would be reported and answer nothing.
    const local = airlock(['serve', '--library', lib, '--port', '0', '--enable', 'local-assistant']);
    expect([local.status, local.stderr]).toEqual([2, expect.stringContaining('local-assistant is on for the library')]);
    for (const address of ['127.0.0.1', 'localhost', '127.1', 'docs.localhost']) {
      const own = airlock(['serve', '--library', lib, '--port', '0', '--site-host', `${address}=docs.alpha.example`]);
      expect([own.status, own.stderr]).toEqual([2, expect.stringContaining("is an address of this server, not a site's host name")]);
    }
    const port = airlock(['serve', '--library', lib, '--port', '0', '--site-host', 'alpha.intranet:8080=docs.alpha.example']);
    expect([port.status, port.stderr]).toEqual([2, expect.stringContaining('give NAME=DOMAIN')]);
    // Another domain's package put into a site's store by --store (which does not check) is never made that site's active version.
    expect(airlock(['import', pkgs['gamma-by-vendor']!, '--store', join(lib, 'docs.beta.example'), '--trust', vendor.pubPath]).status).toBe(0);
    const before = airlock(['list', '--library', lib, '--site', 'docs.beta.example', '--json']).stdout;
    const foreign = airlock(['activate', 'v3', '--library', lib, '--site', 'docs.beta.example']);
    expect([foreign.status, foreign.stderr]).toEqual([
      1,
      expect.stringContaining('version v3 is a package of gamma.example, not of site docs.beta.example; nothing was changed'),
    ]);
    expect(foreign.stderr).toContain('[AIRLOCK_DOMAIN_MISMATCH]');
    expect(airlock(['list', '--library', lib, '--site', 'docs.beta.example', '--json']).stdout).toBe(before);
    // A store is no library: a site would nest inside it.
    const alpha = join(lib, 'docs.alpha.example');
    for (const args of [
      ['import', pkgs['gamma.example-v1']!, '--library', alpha],
      ['serve', '--library', alpha, '--port', '0'],
      ['list', '--library', alpha],
    ]) {
      const r = airlock(args);
      expect([r.status, r.stderr]).toEqual([2, expect.stringContaining('is a store (it holds versions), not a library of stores')]);
    }
    expect(existsSync(join(alpha, 'gamma.example'))).toBe(false);
    // And a library is no store: it would become a store around its sites. Refused before anything is written.
    const rootBefore = (await readdir(lib)).sort();
    for (const args of [
      ['import', pkgs['gamma.example-v1']!, '--store', lib, '--trust', vendor.pubPath],
      ['import', pkgs['gamma.example-v1']!, '--store', lib], // a refusal too: its audit line would make the library a store
      ['trust', 'init', '--store', lib, '--key', `other=${other.pubPath}`, '--threshold', '1'],
      // and every other command: none takes the library for an empty store (a lock file, "0 lines OK")
      ['list', '--store', lib],
      ['activate', 'v1', '--store', lib],
      ['rollback', '--store', lib],
      ['prune', '--keep', '1', '--store', lib],
      ['audit', 'verify', '--store', lib],
      ['trust', 'show', '--store', lib],
      ['verify', pkgs['gamma.example-v1']!, '--store', lib, '--trust', vendor.pubPath], // decides as import would: refused too
      ['serve', '--store', lib, '--port', '0'],
      ['serve', '--store', lib, '--port', '0', '--follow', 'http://127.0.0.1:9/docs.alpha.example'],
    ]) {
      const r = airlock(args, { env: { AIRLOCK_MIRROR_TOKEN: 'svc_mirror_' + 'm'.repeat(24) } });
      expect([r.status, r.stderr]).toEqual([
        2,
        expect.stringMatching(/ is a library of stores \(its folder [a-z.]+ is a site's store\), not a store: give it with --library/),
      ]);
    }
    expect((await readdir(lib)).sort()).toEqual(rootBefore);
    const bad = airlock(['serve', '--library', lib, '--port', '0', '--site-host', 'alpha.intranet']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('give NAME=DOMAIN');
  });
});
