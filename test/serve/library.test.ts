import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLibraryServer, type LibraryServer } from '../../src/serve/library.js';
import { cleanup, get, setActive, tempRoot, writeVersion } from './helpers.js';

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

async function library(name: string, sites: string[]): Promise<string> {
  const lib = join(root, name);
  for (const s of sites) await cp(template, join(lib, s), { recursive: true });
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

  it('a site removed from the library is closed and no longer answered; one added is served', async () => {
    const lib = await library('removed', ['a.example', 'b.example']);
    srv = await createLibraryServer({ library: lib, siteOptions: () => ({ lease: false }), log: () => {}, pollMs: 3_600_000 });
    const url = (await srv.listen()).replace(/\/$/, '');
    expect((await get(url + '/guide', { Host: 'a.example' })).status).toBe(200);
    await rm(join(lib, 'a.example'), { recursive: true });
    await cp(template, join(lib, 'c.example'), { recursive: true });
    await srv.recheck();
    expect(srv.opened()).toEqual([]);
    // a.example is no site any more: the library answers (404 off its landing page), never a stale page.
    expect((await get(url + '/guide', { Host: 'a.example' })).status).toBe(404);
    expect((await get(url + '/guide', { Host: 'c.example' })).status).toBe(200);
  });
});
