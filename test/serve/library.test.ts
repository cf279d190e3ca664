import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cp, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { connect } from 'node:net';
import { createLibraryServer, type LibraryServer } from '../../src/serve/library.js';
import { LISTING_MS, SiteSummaries } from '../../src/serve/library-sites.js';
import { cleanup, get, setActive, tempRoot, writeVersion } from './helpers.js';
import { until } from '../helpers/wait.js';
import { PageWorkers } from '../../src/serve/html-cache/pool.js';
import { workerSlot } from '../../src/serve/html-cache/worker-slot.js';
import { htmlContextFor } from '../../src/serve/html-context.js';
import { resolveFeatures } from '../../src/features/index.js';
import { featureOptions } from '../../src/serve/features.js';
import { SearchPool } from '../../src/search/pool.js';

/**
 * The library server in process: sites opened on their first request and closed when idle
 * (an injected clock), a damaged site reported while the others serve, a removed site closed.
 */
let root: string;
let template: string;
let srv: LibraryServer | null = null;

const site = (name: string) => ({ 'index.html': `<!doctype html><title>Home &amp; ${name}</title><h1>${name}</h1>`, 'guide.html': `<p>guide of ${name}</p>` });

beforeAll(async () => {
  root = await tempRoot('airlock-library-');
  template = join(root, 'template');
  await writeVersion(template, 'v1', site('template'));
  await setActive(template, 'v1');
});
afterEach(async () => {
  await srv?.close(1000);
  srv = null;
});
afterAll(async () => cleanup(root));

/** A site's store at `dir`: the template's pages, as a package of the domain the folder names. */
async function addSite(dir: string): Promise<void> {
  await writeVersion(dir, 'v1', site('template'), { domain: basename(dir) });
  await setActive(dir, 'v1');
}

async function library(name: string, sites: string[]): Promise<string> {
  const lib = join(root, name);
  for (const s of sites) await addSite(join(lib, s));
  return lib;
}

describe('the library server', () => {
  it('opens a site on its first request, closes it once idle, and opens it again on the next', async () => {
    const lib = await library('idle', ['a.example', 'b.example']);
    let now = 1_000_000;
    const logs: string[] = [];
    srv = await createLibraryServer({
      library: lib,
      siteOptions: () => ({ lease: false }),
      idleMs: 60_000,
      clock: () => now,
      log: (l) => logs.push(l),
      pollMs: 3_600_000,
    });
    const url = (await srv.listen()).replace(/\/$/, '');
    expect(srv.opened()).toEqual([]);
    expect((await get(url + '/guide', { Host: 'a.example' })).status).toBe(200);
    expect(srv.opened()).toEqual(['a.example']);
    now += 30_000;
    expect((await get(url + '/guide', { Host: 'b.example' })).status).toBe(200);
    now += 40_000; // a: idle 70 s, b: 40 s
    await srv.recheck();
    expect(srv.opened()).toEqual(['b.example']);
    expect((await get(url + '/guide', { Host: 'a.example' })).body.toString()).toContain('guide of template');
    expect(srv.opened().sort()).toEqual(['a.example', 'b.example']);
  });

  it('every site builds its pages on one shared pool: never more workers than it has, none left running once the pages are built', async () => {
    const sites = ['p1.example', 'p2.example', 'p3.example', 'p4.example', 'p5.example', 'p6.example'];
    const lib = await library('pool', sites);
    let live = 0;
    let most = 0;
    let made = 0;
    const pageWorkers = new PageWorkers(2, () => {
      made++;
      most = Math.max(most, ++live);
      const s = workerSlot();
      return { ...s, end: async () => (live--, s.end()) };
    });
    const context = htmlContextFor(resolveFeatures({}));
    srv = await createLibraryServer({
      library: lib,
      siteOptions: () => ({ lease: false, htmlTransform: { context }, pageWorkers }),
      log: () => {},
      pollMs: 3_600_000,
    });
    const url = (await srv.listen()).replace(/\/$/, '');
    const pages = await Promise.all(sites.map((s) => get(url + '/guide', { Host: s })));
    expect(pages.map((p) => p.status)).toEqual(sites.map(() => 200));
    expect(pages[0]!.body.toString()).toContain('guide of template');
    // The background builds of the other pages end; so do the workers (a site opened by a request is not held).
    for (let i = 0; i < 200 && (live > 0 || made < 2); i++) await new Promise((r) => setTimeout(r, 25));
    expect(made).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(2);
    expect(live).toBe(0);
  }, 30_000);

  it('a site whose active version is a package of another domain (put there by hand) is not served under its name', async () => {
    const lib = await library('mixed', ['right.example']);
    await writeVersion(join(lib, 'wrong.example'), 'v1', site('other'), { domain: 'docs.other.example' });
    await setActive(join(lib, 'wrong.example'), 'v1');
    srv = await createLibraryServer({ library: lib, siteOptions: () => ({ lease: false }), log: () => {}, pollMs: 3_600_000 });
    const url = (await srv.listen()).replace(/\/$/, '');
    const wrong = await get(url + '/guide', { Host: 'wrong.example' });
    expect(wrong.status).toBe(503);
    expect(wrong.body.toString()).toContain('the version it serves (v1) is a package of docs.other.example');
    expect((await get(url + '/wrong.example/guide')).status).toBe(503);
    expect((await get(url + '/guide', { Host: 'right.example' })).status).toBe(200);
    // Listed with that problem, under its own name: never under the other package's title.
    const listing = JSON.parse((await get(url + '/_airlock/library')).body.toString()) as {
      sites: Array<{ domain: string; title: string; problem: string | null }>;
    };
    expect(listing.sites.find((x) => x.domain === 'wrong.example')).toMatchObject({
      title: 'wrong.example',
      problem: expect.stringContaining('a package of docs.other.example'),
    });
    expect(srv.opened()).toEqual(['right.example']); // closed at once: nothing of it is prepared
  });

  it("a site's folder swapped for another store (same version label) while served: the new folder's store is served, never the old one's", async () => {
    const lib = await library('swapped', ['swap.example']);
    const logs: string[] = [];
    srv = await createLibraryServer({ library: lib, siteOptions: () => ({ lease: false }), log: (l) => logs.push(l), pollMs: 3_600_000 });
    const url = (await srv.listen()).replace(/\/$/, '');
    expect((await get(url + '/guide', { Host: 'swap.example' })).body.toString()).toContain('guide of template');
    await rename(join(lib, 'swap.example'), join(root, 'swap-old'));
    await writeVersion(join(lib, 'swap.example'), 'v1', site('replacement'), { domain: 'swap.example' });
    await setActive(join(lib, 'swap.example'), 'v1');
    await srv.recheck(); // SIGHUP (the poll sees it within 2 s)
    expect((await get(url + '/guide', { Host: 'swap.example' })).body.toString()).toContain('guide of replacement');
    expect(logs.some((l) => l.includes('its folder was replaced by another store'))).toBe(true);
  });

  it('a site whose version is removed while served answers 503 with the reason (never 500, no raw errno logged), and is served again once restored', async () => {
    const lib = await library('gone', ['gone.example', 'calm.example']);
    const logs: string[] = [];
    let now = 1_000_000;
    srv = await createLibraryServer({ library: lib, siteOptions: () => ({ lease: false }), log: (l) => logs.push(l), pollMs: 3_600_000, clock: () => now });
    const url = (await srv.listen()).replace(/\/$/, '');
    expect((await get(url + '/', { Host: 'gone.example' })).status).toBe(200);
    await rm(join(lib, 'gone.example', 'versions'), { recursive: true });
    const seen: number[] = [];
    for (let i = 0; i < 50 && seen.at(-1) !== 503; i++) {
      seen.push((await get(url + '/guide', { Host: 'gone.example' })).status);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen.at(-1), logs.join('\n')).toBe(503);
    expect(seen.every((s) => s === 503)).toBe(true); // the first request too: a file gone is a 503, never a 500
    const body = (await get(url + '/guide', { Host: 'gone.example' })).body.toString();
    expect(body).toContain('site gone.example cannot be served');
    expect(body).not.toContain(lib);
    expect((await get(url + '/guide', { Host: 'calm.example' })).status).toBe(200);
    expect(logs.filter((l) => l.includes('site gone.example cannot be served'))).toHaveLength(1);
    expect(logs.join('\n')).not.toMatch(/ENOENT|no such file/);
    // The folder back (a restore): the site is opened again at a request after the retry delay, and serves.
    await writeVersion(join(lib, 'gone.example'), 'v1', site('template'), { domain: 'gone.example' });
    now += 60_000;
    await until(async () => (await get(url + '/guide', { Host: 'gone.example' })).status === 200, { timeoutMs: 10_000 });
  });

  it('a switch an open site refuses (a damaged version): the listing and a search say the version it serves, and why', async () => {
    const lib = await library('refused', ['r.example']);
    srv = await createLibraryServer({ library: lib, siteOptions: () => ({ lease: false }), log: () => {}, pollMs: 50 });
    const url = (await srv.listen()).replace(/\/$/, '');
    expect((await get(url + '/', { Host: 'r.example' })).status).toBe(200); // open, serving v1
    await writeVersion(join(lib, 'r.example'), 'v2', site('second'), { domain: 'r.example' });
    await mkdir(join(root, 'outside-r'));
    await symlink(join(root, 'outside-r'), join(lib, 'r.example', 'versions', 'v2', 'search')); // v2 damaged: a link in it
    await setActive(join(lib, 'r.example'), 'v2');
    type Listed = { sites: Array<{ domain: string; version: string; title: string; importedAt: string; problem: string | null }> };
    let listed: Listed['sites'][number] | undefined;
    await until(
      async () => (listed = ((await (await fetch(url + '/_airlock/library')).json()) as Listed).sites.find((x) => x.domain === 'r.example'))?.problem !== null,
      { timeoutMs: 10_000 },
    );
    expect(listed).toMatchObject({ version: 'v1', problem: expect.stringMatching(/^serving v1: its active version v2 cannot be served \(.*symbolic link/) });
    expect(listed!.title).toBe('Home & template'); // v1's, never v2's ("Home & second")
    const search = await fetch(url + '/_airlock/library/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"template"}',
    });
    // Asked as the site it serves (its search is off here), not left out as a site that cannot be served.
    expect((await search.json()) as unknown).toMatchObject({ unavailable: [{ domain: 'r.example', why: 'local search is off for this site' }] });
    expect(listed!.problem).not.toContain(lib);
    expect(listed!.problem).not.toContain('outside-r'); // where the link points is for the log, not for readers
    expect((await get(url + '/', { Host: 'r.example' })).headers['x-airlock-version']).toBe('v1');
  });

  it('a damaged site answers 503 with its reason and is listed with its problem; the other sites serve on', async () => {
    const lib = await library('damaged', ['good.example', 'bad.example']);
    await writeFile(join(lib, 'bad.example', 'state.json'), '{ not json');
    let now = 1_000_000;
    srv = await createLibraryServer({ library: lib, siteOptions: () => ({ lease: false }), log: () => {}, pollMs: 3_600_000, clock: () => now });
    const url = (await srv.listen()).replace(/\/$/, '');
    const bad = await get(url + '/', { Host: 'bad.example' });
    expect(bad.status).toBe(503);
    expect(bad.headers['retry-after']).toBe('5');
    expect(bad.body.toString()).toContain('site bad.example cannot be served');
    expect(bad.body.toString()).not.toContain(lib); // where in its store, not where the library is on the server
    expect((await get(url + '/bad.example/guide')).status).toBe(503);
    expect((await get(url + '/', { Host: 'good.example' })).body.toString()).toContain('<h1>template</h1>');
    const listing = JSON.parse((await get(url + '/_airlock/library')).body.toString()) as {
      sites: Array<{ domain: string; problem: string | null; title: string }>;
    };
    expect(listing.sites.find((s) => s.domain === 'bad.example')!.problem).toMatch(/state\.json/);
    expect(listing.sites.find((s) => s.domain === 'good.example')).toMatchObject({ problem: null, title: 'Home & template' });
    // The landing page escapes what a site's title holds.
    const landing = (await get(url + '/')).body.toString();
    expect(landing).toContain('Home &amp; template');
    expect(landing).not.toContain('Home & template');
    // Repaired: served again once the retry delay has passed, not hammered open at every request before.
    await cp(join(template, 'state.json'), join(lib, 'bad.example', 'state.json'));
    expect((await get(url + '/', { Host: 'bad.example' })).status).toBe(503);
    now += 5_001;
    expect((await get(url + '/', { Host: 'bad.example' })).status).toBe(200);
  });

  it('a site removed while its pages are being prepared: the server says so and serves on (no unhandled failure); two Host fields are refused', async () => {
    const lib = join(root, 'removed-busy');
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}.html`, `<!doctype html><title>P${i}</title><p>${'word '.repeat(400)}</p>`]));
    await writeVersion(join(lib, 'busy.example'), 'v1', { 'index.html': '<title>busy</title>', ...many }, { variants: false, domain: 'busy.example' });
    await setActive(join(lib, 'busy.example'), 'v1');
    await addSite(join(lib, 'calm.example'));
    const logs: string[] = [];
    srv = await createLibraryServer({
      library: lib,
      siteOptions: () => ({
        lease: false,
        log: (l: string) => logs.push(l),
        transformHtml: (html) => Buffer.from(html.toString().replace('<p>', '<p data-x>')),
      }),
      log: (l) => logs.push(l),
      pollMs: 3_600_000,
    });
    const url = (await srv.listen()).replace(/\/$/, '');
    expect((await get(url + '/p5', { Host: 'busy.example' })).status).toBe(200);
    await rm(join(lib, 'busy.example'), { recursive: true });
    await srv.recheck();
    expect((await get(url + '/guide', { Host: 'calm.example' })).status).toBe(200);
    const twice = await new Promise<number>((resolve, reject) => {
      const sock = connect(Number(new URL(url).port), '127.0.0.1', () =>
        sock.write('GET / HTTP/1.1\r\nHost: calm.example\r\nHost: busy.example\r\nConnection: close\r\n\r\n'),
      );
      let got = '';
      sock.on('data', (d) => (got += d.toString()));
      sock.on('end', () => resolve(Number(got.slice(9, 12))));
      sock.on('error', reject);
    });
    expect(twice).toBe(400);
    // The pages that could not be prepared are said in words, never as a raw errno.
    await until(() => logs.some((l) => /transformed \d+ HTML|preparing the HTML of v1 stopped/.test(l)), { timeoutMs: 20_000 });
    expect(logs.join('\n')).not.toMatch(/ENOENT|no such file/);
  }, 30_000);

  it('a site removed from the library is closed and no longer answered; one added is served', async () => {
    const lib = await library('removed', ['a.example', 'b.example']);
    srv = await createLibraryServer({ library: lib, siteOptions: () => ({ lease: false }), log: () => {}, pollMs: 3_600_000 });
    const url = (await srv.listen()).replace(/\/$/, '');
    expect((await get(url + '/guide', { Host: 'a.example' })).status).toBe(200);
    await rm(join(lib, 'a.example'), { recursive: true });
    await addSite(join(lib, 'c.example'));
    await srv.recheck();
    expect(srv.opened()).toEqual([]);
    // a.example is no site any more: the library answers (404 off its landing page), never a stale page.
    expect((await get(url + '/guide', { Host: 'a.example' })).status).toBe(404);
    expect((await get(url + '/guide', { Host: 'c.example' })).status).toBe(200);
  });

  it('the library folder itself gone: said once, its sites served as they were, its listing 503 until it is back', async () => {
    const lib = await library('vanishing', ['a.example', 'b.example']);
    const logs: string[] = [];
    let now = 1_000_000;
    srv = await createLibraryServer({ library: lib, siteOptions: () => ({ lease: false }), log: (l) => logs.push(l), pollMs: 3_600_000, clock: () => now });
    const url = (await srv.listen()).replace(/\/$/, '');
    expect((await get(url + '/guide', { Host: 'a.example' })).status).toBe(200);
    await rename(lib, lib + '.moved');
    await srv.recheck();
    await srv.recheck();
    now += LISTING_MS;
    expect(logs.filter((l) => l.includes('cannot read the library'))).toHaveLength(1);
    expect(logs.find((l) => l.includes('cannot read the library'))).toContain('its 2 site(s) are served as they were');
    const listing = await get(url + '/_airlock/library');
    expect(listing.status).toBe(503);
    expect(listing.body.toString()).not.toContain(lib); // not where the library is on this server
    expect(JSON.parse((await get(url + '/_airlock/health')).body.toString())).toEqual({ status: 'ok', sites: 2, problem: 'the library folder cannot be read' });
    expect((await get(url + '/guide', { Host: 'a.example' })).status).toBe(200);
    await rename(lib + '.moved', lib);
    await srv.recheck();
    now += LISTING_MS;
    expect(logs.at(-1)).toContain('can be read again');
    expect((await get(url + '/_airlock/library')).status).toBe(200);
  });
});

describe('the library’s readiness', () => {
  it('/_airlock/ready is 503 naming the sites whose bundles are still to be tried, 200 once none is', async () => {
    const lib = await library('ready', ['a.example']);
    const pending = new Set(['b.example']);
    srv = await createLibraryServer({ library: lib, siteOptions: () => ({ lease: false }), preparing: () => [...pending], log: () => {}, pollMs: 3_600_000 });
    const url = (await srv.listen()).replace(/\/$/, '');
    const before = await get(url + '/_airlock/ready');
    expect([before.status, before.headers['retry-after'], JSON.parse(before.body.toString())]).toEqual([
      503,
      '2',
      { status: 'not ready', preparing: ['b.example'] },
    ]);
    expect((await get(url + '/_airlock/health')).status).toBe(200);
    pending.clear();
    const after = await get(url + '/_airlock/ready');
    expect([after.status, JSON.parse(after.body.toString())]).toEqual([200, { status: 'ready', sites: 1 }]);
  });
});

describe('the library listing', () => {
  it('is read once per LISTING_MS however many ask: requests meanwhile share one reading', async () => {
    const lib = await library('listing', ['a.example']);
    let now = 5_000_000;
    const summaries = new SiteSummaries(() => now);
    const burst = Array.from({ length: 50 }, () => summaries.list(lib));
    expect(new Set(burst).size).toBe(1);
    expect((await burst[0]!).sites.map((s) => s.domain)).toEqual(['a.example']);
    await addSite(join(lib, 'b.example'));
    expect((await summaries.list(lib)).sites.map((s) => s.domain)).toEqual(['a.example']);
    now += LISTING_MS;
    expect((await summaries.list(lib)).sites.map((s) => s.domain)).toEqual(['a.example', 'b.example']);
  });
});

describe('search across the library', () => {
  const pages = (name: string, word: string) => ({
    'index.html': `<!doctype html><html lang="en"><title>${name} docs</title><h1>${name}</h1><p>Welcome to ${name}.</p>`,
    'install.html': `<!doctype html><html lang="en"><title>Install ${name}</title><h1 id="steps">Installing ${name}</h1><p>To install ${name}, copy the ${word} files.</p>`,
  });
  async function searchLibrary(name: string): Promise<string> {
    const lib = join(root, name);
    for (const [d, word] of [
      ['alpha.example', 'turbine'],
      ['beta.example', 'turbine'],
      ['gamma.example', 'gearbox'],
    ] as const) {
      await writeVersion(join(lib, d), 'v1', pages(d.split('.')[0]!, word), { domain: d });
      await setActive(join(lib, d), 'v1');
    }
    const off = featureOptions(resolveFeatures({ deployment: 'air-gapped', disable: ['local-search'] }), null, { log: () => {} });
    srv = await createLibraryServer({
      library: lib,
      siteOptions: (d) => ({
        lease: false,
        log: () => {},
        ...(d === 'gamma.example' ? off : featureOptions(resolveFeatures({ deployment: 'air-gapped' }), null, { log: () => {}, searchOnDemand: true })),
      }),
      log: () => {},
      pollMs: 3_600_000,
    });
    return (await srv.listen()).replace(/\/$/, '');
  }
  const post = (url: string, body: unknown, type = 'application/json') =>
    fetch(url + '/_airlock/library/search', {
      method: 'POST',
      headers: { 'content-type': type },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('one query over every site, grouped by site with links under its path; filter.site narrows; a site with search off is named', async () => {
    const url = await searchLibrary('search-all');
    // As a reader would: asked again while some site's index is still being built (a loaded machine).
    let r = await post(url, { query: 'turbine' });
    await until(async () => ((await (r = await post(url, { query: 'turbine' })).clone().json()) as { pending: unknown[] }).pending.length === 0, {
      timeoutMs: 20_000,
    });
    expect(r.status).toBe(200);
    const all = (await r.json()) as {
      sites: Array<{ domain: string; title: string; hits: Array<{ path: string }> }>;
      unavailable: unknown[];
      pending: unknown[];
    };
    expect(all.sites.map((s) => s.domain).sort()).toEqual(['alpha.example', 'beta.example']);
    expect(all.sites.find((s) => s.domain === 'alpha.example')!.hits[0]!.path).toMatch(/^\/alpha\.example\/install(#steps)?$/);
    expect(all.sites.find((s) => s.domain === 'beta.example')!.title).toBe('beta docs');
    expect(all.unavailable).toEqual([{ domain: 'gamma.example', why: 'local search is off for this site' }]);
    expect(all.pending).toEqual([]);
    // The link works: the hit's page, served under the site's path.
    const page = await get(url + all.sites[0]!.hits[0]!.path.replace(/#.*$/, ''));
    expect(page.status).toBe(200);
    const one = (await (await post(url, { query: 'turbine', filter: { site: 'BETA.example' } })).json()) as { sites: Array<{ domain: string }> };
    expect(one.sites.map((s) => s.domain)).toEqual(['beta.example']);
  }, 30_000);

  it('twenty sites searched together stay loaded in one pool: searches across them and each site\'s own search answer, never "being built" again', async () => {
    const lib = join(root, 'search-many');
    const domains = Array.from({ length: 20 }, (_, i) => `s${i}.example`);
    for (const d of domains) {
      await writeVersion(join(lib, d), 'v1', pages(d.split('.')[0]!, 'turbine'), { domain: d });
      await setActive(join(lib, d), 'v1');
    }
    const pool = new SearchPool({ workers: 2, budgetBytes: 256 * 1024 * 1024 });
    const pageWorkers = new PageWorkers(2, workerSlot); // shared, as serve --library does
    srv = await createLibraryServer({
      library: lib,
      siteOptions: () => ({
        lease: false,
        pageWorkers,
        log: () => {},
        ...featureOptions(resolveFeatures({ deployment: 'air-gapped' }), null, { log: () => {}, searchOnDemand: true, searchPool: pool }),
      }),
      log: () => {},
      pollMs: 3_600_000,
    });
    const url = (await srv.listen()).replace(/\/$/, '');
    type All = { sites: Array<{ domain: string }>; pending: string[] };
    let all: All = { sites: [], pending: domains };
    await until(async () => (all = (await (await post(url, { query: 'turbine' })).json()) as All).pending.length === 0, { timeoutMs: 30_000 });
    expect(all.sites).toHaveLength(20);
    // Every index loaded: rounds of a search across all at once with each site's own search.
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      const [across, ...own] = await Promise.all([
        post(url, { query: 'turbine' }).then(async (r) => (await r.json()) as All),
        ...domains.map((d) =>
          fetch(`${url}/${d}/_airlock/search/${d}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"turbine"}' }),
        ),
      ]);
      expect([across!.sites.length, across!.pending]).toEqual([20, []]);
      statuses.push(...own.map((r) => (r as Response).status));
    }
    expect(statuses.filter((x) => x !== 200)).toEqual([]);
    expect(pool.workers).toBeLessThanOrEqual(2);
    await srv.close(1000);
    srv = null;
    await pool.close();
  }, 60_000);

  it('refuses in words: unknown site, wrong type, not JSON, too large, GET', async () => {
    const url = await searchLibrary('search-bad');
    const unknown = await post(url, { query: 'x', filter: { site: ['alpha.example', 'nope.example'] } });
    expect([unknown.status, await unknown.json()]).toEqual([400, { error: 'filter.site: no site "nope.example" in this library' }]);
    expect((await post(url, { query: 'x' }, 'text/plain')).status).toBe(415);
    expect((await post(url, '{"query":')).status).toBe(400);
    expect((await post(url, { query: '' })).status).toBe(400);
    expect((await post(url, { query: 'x'.repeat(9000) })).status).toBe(413);
    const g = await get(url + '/_airlock/library/search');
    expect([g.status, g.headers.allow]).toEqual([405, 'POST']);
  }, 30_000);

  it('the landing page searches with a plain form: results grouped by site, markup in an index never reaches the page', async () => {
    const url = await searchLibrary('search-page');
    let page = '';
    await until(async () => !(page = (await get(url + '/?q=turbine&site=')).body.toString()).includes('Still preparing'), { timeoutMs: 20_000 });
    expect(page).toContain('<form role="search" action="/" method="get"');
    expect(page).toMatch(/<section class="site-hits" aria-label="alpha docs"><h3><a href="\/alpha\.example\/">/);
    expect(page).toMatch(/<a href="\/beta\.example\/install(#steps)?">/);
    expect(page).toContain('<mark>');
    expect(page).toContain('Not searched: <bdi>gamma.example</bdi> (local search is off for this site).');
    const narrowed = (await get(url + '/?q=turbine&site=alpha.example')).body.toString();
    expect(narrowed).not.toContain('href="/beta.example/install');
    expect(narrowed).toContain('<option value="alpha.example" selected>');
    // A site the form names that the library does not hold is said, not silently left out.
    const unknown = (await get(url + '/?q=turbine&site=nope.example&site=%1b%5b31m%3Cb%3E')).body.toString();
    expect(unknown).toContain('Not searched: <bdi>nope.example</bdi> (no such site in this library).');
    expect(unknown).toContain('Not searched: <bdi> [31m&lt;b&gt;</bdi> (no such site in this library).');
    expect(unknown).toContain('No results');
    const hostile = (await get(url + '/?q=' + encodeURIComponent('<script>alert(1)</script>'))).body.toString();
    expect(hostile).not.toContain('<script>alert');
    expect(hostile).toContain('&lt;script&gt;');
    // A query's bidirectional override or control character is not echoed (title, search box, heading).
    const bidi = (await get(url + '/?q=' + encodeURIComponent('\u202eturbine\u001b[31m'))).body.toString();
    // eslint-disable-next-line no-control-regex -- control characters are what must not be there
    expect(bidi).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u0000-\u0008\u000b-\u001f]/);
    expect(bidi).toContain('<title>turbine [31m – ');
  }, 30_000);
});
