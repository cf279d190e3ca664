import { afterEach, describe, expect, it } from 'vitest';
import { cp, mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { createLibraryServer, type LibraryServer } from '../../src/serve/library.js';
import { readyRoutes } from '../../src/start/ready.js';
import { cleanup, get, setActive, tempRoot, writeVersion } from './helpers.js';
import { until } from '../helpers/wait.js';

/**
 * A served version's folder swapped for a symbolic link (out of the store, to anywhere the server
 * can read) while served: nothing is read through it, the site answers 503 naming the link, and
 * once the real folder is back it serves its own bytes again (nothing read through the link is
 * kept in memory).
 */
let srv: AirlockServer | LibraryServer | null = null;
let root: string | null = null;
afterEach(async () => {
  await srv?.close(0);
  srv = null;
  if (root) await cleanup(root);
  root = null;
});

// Same sizes as the real files: a size check alone would pass them.
const real = { 'index.html': '<!doctype html><title>home</title><p>home', 'a.css': 'body{color:red}', 'b.css': 'body{color:red}' };
const outside = { 'a.css': 'body{color:tan}', 'b.css': 'body{color:tan}' };

/** `dir` swapped for a link to a copy of it outside the store whose files hold `outside`'s bytes; returns where the real folder went. */
async function swapForLink(dir: string, copy: string, files: Record<string, string>, sub = ''): Promise<string> {
  await cp(dir, copy, { recursive: true });
  for (const [name, body] of Object.entries(files)) await writeFile(join(copy, sub, name), body);
  const moved = `${dir}.moved`;
  await rename(dir, moved);
  await symlink(copy, dir);
  return moved;
}

async function putBack(dir: string, moved: string): Promise<void> {
  await rm(dir);
  await rename(moved, dir);
}

/** Requests until the answer says `said`; no answer before it is the outside copy's bytes. */
async function untilSaid(base: string, path: string, said: string, host?: Record<string, string>): Promise<{ status: number; body: string }> {
  for (let i = 0; i < 200; i++) {
    const r = await get(base + path, host);
    const body = r.body.toString();
    expect(body).not.toContain('color:tan');
    if (body.includes(said)) return { status: r.status, body };
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`${path} never said ${said} in 200 requests`);
}

describe('a served folder swapped for a symbolic link', () => {
  it('version folder → link out of the store (one store): never read through; 503 naming the link; the real folder back serves its own bytes', async () => {
    root = await tempRoot('airlock-swap-');
    const store = join(root, 'store');
    await writeVersion(store, 'v1', real);
    await setActive(store, 'v1');
    srv = await createAirlockServer({ store, lease: false, log: () => {}, guardMs: 20, app: readyRoutes(() => null) });
    const base = (await srv.listen()).replace(/\/$/, '');
    expect((await get(base + '/a.css')).body.toString()).toBe('body{color:red}'); // held in memory from now on
    expect((await get(base + '/_airlock/ready')).status).toBe(200);
    const dir = join(store, 'versions', 'v1');
    const moved = await swapForLink(dir, join(root, 'elsewhere'), outside, 'site');
    const refused = await untilSaid(base, '/b.css', 'versions/v1 is a symbolic link, which is not followed');
    expect(refused.status).toBe(503);
    expect(refused.body).not.toContain(root); // no path of the host, nor where the link points
    expect((await get(base + '/a.css')).status).toBe(503);
    expect((await get(base + '/_airlock/health')).status).not.toBe(503); // airlock's own routes still answer
    const ready = await get(base + '/_airlock/ready'); // out of a load balancer's rotation, saying why
    expect([ready.status, JSON.parse(ready.body.toString())]).toEqual([
      503,
      { status: 'damaged', version: 'v1', problem: expect.stringContaining('symbolic link') },
    ]);
    await putBack(dir, moved);
    await until(async () => (await get(base + '/b.css')).status === 200, { timeoutMs: 10_000 });
    expect((await get(base + '/a.css')).body.toString()).toBe('body{color:red}');
    expect((await get(base + '/b.css')).body.toString()).toBe('body{color:red}');
    expect((await get(base + '/_airlock/ready')).status).toBe(200);
  });

  it('pages folder (versions/V/site) → link, in a pinned server too: 503 naming it', async () => {
    root = await tempRoot('airlock-swap-');
    const store = join(root, 'store');
    await writeVersion(store, 'v1', real);
    await setActive(store, 'v1');
    srv = await createAirlockServer({ store, version: 'v1', lease: false, log: () => {}, guardMs: 20 });
    const base = (await srv.listen()).replace(/\/$/, '');
    await swapForLink(join(store, 'versions', 'v1', 'site'), join(root, 'elsewhere'), outside);
    expect((await get(base + '/a.css')).status).toBe(503); // the package's digest: the outside bytes are refused at once
    const refused = await untilSaid(base, '/b.css', 'versions/v1/site is a symbolic link');
    expect(refused.status).toBe(503);
  });

  it('prepared-pages folder (versions/V/html) → link, in a library: 503 naming it, and the listing carries the problem', async () => {
    root = await tempRoot('airlock-swap-');
    const lib = join(root, 'lib');
    const store = join(lib, 'docs.example');
    await writeVersion(store, 'v1', real, { domain: 'docs.example' });
    await setActive(store, 'v1');
    srv = await createLibraryServer({
      library: lib,
      siteOptions: () => ({ lease: false, htmlTransform: { run: (html: Buffer) => html, key: 'k' } }),
      log: () => {},
      pollMs: 20,
    });
    const base = (await srv.listen()).replace(/\/$/, '');
    const host = { Host: 'docs.example' };
    expect((await get(base + '/', host)).status).toBe(200);
    const html = join(store, 'versions', 'v1', 'html');
    await until(
      async () =>
        readdir(html).then(
          (n) => n.length > 0,
          () => false,
        ),
      { timeoutMs: 10_000 },
    );
    await mkdir(join(root, 'elsewhere'));
    await rename(html, `${html}.moved`);
    await symlink(join(root, 'elsewhere'), html);
    const refused = await untilSaid(base, '/', 'docs.example/versions/v1/html is a symbolic link', host);
    expect(refused.status).toBe(503);
    expect(refused.body).not.toContain(root);
    const listing = JSON.parse((await get(base + '/_airlock/library')).body.toString()) as { sites: Array<{ domain: string; problem: string | null }> };
    expect(listing.sites.find((s) => s.domain === 'docs.example')?.problem).toContain('html is a symbolic link');
  });

  it('a folder deep in site/ → link, large files (streamed, no digest): 503, never the outside bytes; a large file of another size is refused too', async () => {
    root = await tempRoot('airlock-swap-');
    const store = join(root, 'store');
    const big = (c: string) => `/* ${c} */` + 'x'.repeat(3000);
    await writeVersion(store, 'v1', { 'index.html': '<!doctype html><title>home</title>', 'guide/g.css': big('real'), 'guide/h.css': big('real') });
    await setActive(store, 'v1');
    // Files above 1 KB are streamed (no digest check): the guard is slowed so the read-time checks are what refuse.
    srv = await createAirlockServer({ store, lease: false, log: () => {}, smallFileMax: 1024, guardMs: 3_600_000 });
    const base = (await srv.listen()).replace(/\/$/, '');
    expect((await get(base + '/guide/g.css')).body.toString()).toContain('real');
    const guide = join(store, 'versions', 'v1', 'site', 'guide');
    const moved = await swapForLink(guide, join(root, 'elsewhere'), { 'g.css': big('tan!') });
    const through = await get(base + '/guide/g.css');
    expect([through.status, through.body.toString()]).toEqual([503, expect.stringContaining('differs from its package')]);
    await putBack(guide, moved);
    expect((await get(base + '/guide/g.css')).body.toString()).toContain('real');
    // In place: 5 bytes shorter, then 5 bytes longer than the manifest says.
    const file = join(guide, 'h.css');
    for (const other of [big('real').slice(5), big('real') + 'evil!']) {
      await writeFile(file, other);
      const r = await get(base + '/guide/h.css');
      expect([r.status, r.body.toString()]).toEqual([503, expect.stringContaining('differs from its package')]);
    }
  });
});
