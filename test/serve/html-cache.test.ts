import { vi, describe, it, expect } from 'vitest';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { link, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { buildPage } from '../../src/serve/html-cache/page.js';
import { readHtmlIndex, writeHtmlIndex } from '../../src/serve/html-cache/index-file.js';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createAirlockServer, type AirlockServer, type AirlockServerOptions } from '../../src/serve/index.js';
import { featureOptions } from '../../src/serve/features.js';
import { prebuildHtmlCache } from '../../src/serve/index.js';
import { resolveFeatures, transformHtmlDetailed } from '../../src/features/index.js';
import { serveCaseAfterEach, get, setActive, sha256, tempRoot, writeVersion, type SiteFiles } from './helpers.js';
import { until } from '../helpers/wait.js';

const t = serveCaseAfterEach();

const MARK = '<!-- transformed -->';
const page = (i: number, extra = '') => `<!doctype html><title>p${i}</title><p>${'page text '.repeat(150)}${i}</p>${extra}`;
function site(n: number): SiteFiles {
  const s: SiteFiles = { 'index.html': page(0), 'app.css': 'body{color:red}'.repeat(100) };
  for (let i = 1; i < n; i++) s[`docs/p${i}.html`] = page(i);
  return s;
}

/** An in-process transform that counts its calls: proves when the cache is (not) used. */
function counting(tag = MARK) {
  const c = {
    calls: 0,
    hook: (html: Buffer) => {
      c.calls++;
      return { html: Buffer.concat([html, Buffer.from(tag)]), scriptHashes: [`'sha256-${sha256(html).slice(0, 43)}='`] };
    },
  };
  return c;
}

async function storeWith(files: SiteFiles): Promise<string> {
  t.root = await tempRoot();
  const store = join(t.root, 'store');
  await writeVersion(store, 'v1', files);
  await setActive(store, 'v1');
  return store;
}

/** A server, by default once its background HTML build has ended (`lazy`: at once, as it answers). */
async function start(o: AirlockServerOptions, lazy = false): Promise<{ srv: AirlockServer; base: string }> {
  const srv = await createAirlockServer({ lease: false, log: () => {}, ...o });
  t.servers.push(srv);
  const base = (await srv.listen(0)).slice(0, -1);
  if (!lazy) await srv.prepared();
  return { srv, base };
}

const keyDirs = async (store: string) => (await readdir(join(store, 'versions', 'v1', 'html')).catch(() => [] as string[])).sort();

describe('transformed HTML cached on disk per (version, options)', () => {
  it('a second load with the same key transforms nothing and serves the cached pages', async () => {
    const files = site(6);
    const store = await storeWith(files);
    const a = counting();
    await start({ store, htmlTransform: { run: a.hook, key: 'k1' } });
    expect(a.calls).toBe(6);
    await t.servers.pop()!.close();

    const b = counting();
    const { base } = await start({ store, htmlTransform: { run: b.hook, key: 'k1' } });
    expect(b.calls).toBe(0);
    const r = await get(base + '/docs/p3', { 'accept-encoding': 'identity' });
    expect(r.body.toString()).toBe(page(3) + MARK);
    expect(r.headers.etag).toBe(`"${sha256(page(3) + MARK).slice(0, 32)}"`);
    expect(await keyDirs(store)).toHaveLength(1);
  });

  it('a different feature set (key) builds its own cache beside the first', async () => {
    const store = await storeWith(site(3));
    await start({ store, htmlTransform: { run: counting().hook, key: 'air-gapped' } });
    const other = counting('<!-- cloud -->');
    const { base } = await start({ store, htmlTransform: { run: other.hook, key: 'cloud' } });
    expect(other.calls).toBe(3);
    expect(await keyDirs(store)).toHaveLength(2);
    expect((await get(base + '/', { 'accept-encoding': 'identity' })).body.toString()).toBe(page(0) + '<!-- cloud -->');
  });

  it('the key of src/features options differs by deployment, and the workers produce what transformHtmlDetailed does', async () => {
    const files = site(3);
    const store = await storeWith(files);
    const air = resolveFeatures({});
    const { base } = await start({ store, ...featureOptions(air), transformPoolSize: 2 });
    await start({ store, ...featureOptions(resolveFeatures({ deployment: 'cloud' })), transformPoolSize: 1 });
    expect(await keyDirs(store)).toHaveLength(2);
    const want = await transformHtmlDetailed(Buffer.from(files['docs/p1.html']!), { features: air.features, deployment: air.deployment });
    const r = await get(base + '/docs/p1', { 'accept-encoding': 'identity' });
    expect(r.body.equals(want.html)).toBe(true);
    expect(r.headers['content-security-policy']).toContain(want.scriptHashes[0]);
  });

  it('prebuildHtmlCache (airlock import) builds exactly what a default serve then loads without transforming', async () => {
    const store = await storeWith(site(4));
    const report = await prebuildHtmlCache(store, 'v1', { poolSize: 1 });
    expect(report).toMatchObject({ pages: 4, built: 4 });
    expect(await keyDirs(store)).toEqual([report.key]);
    expect((await prebuildHtmlCache(store, 'v1', { poolSize: 1 })).built).toBe(0);
    const logs: string[] = [];
    const { base } = await start({ store, ...featureOptions(resolveFeatures({})), log: (l) => logs.push(l) });
    expect(logs.filter((l) => l.includes('transformed'))).toEqual([]);
    expect((await get(base + '/docs/p2', { 'accept-encoding': 'identity' })).body.toString()).toContain('name="airlock-features"');
  });

  it('a missing cached file, or a streamed one of the wrong size, is rebuilt at load, and only that page', async () => {
    const store = await storeWith(site(5));
    await start({ store, htmlTransform: { run: counting().hook, key: 'k' } });
    const dir = join(store, 'versions', 'v1', 'html', (await keyDirs(store))[0]!);
    await writeFile(join(dir, `${sha256(page(1))}.html`), 'torn');
    await rm(join(dir, `${sha256(page(2))}.html.gz`));
    const again = counting();
    // smallFileMax 100: every page is "large" (streamed), so its size is checked at load
    const { base } = await start({ store, smallFileMax: 100, htmlTransform: { run: again.hook, key: 'k' } });
    expect(again.calls).toBe(2);
    for (const p of ['/', '/docs/p1', '/docs/p2', '/docs/p3', '/docs/p4']) {
      const r = await get(base + p, { 'accept-encoding': 'gzip' });
      expect(gunzipSync(r.body).toString()).toMatch(new RegExp(`${MARK}$`));
      expect((await get(base + p, { 'accept-encoding': 'identity' })).body.toString()).toMatch(new RegExp(`${MARK}$`));
    }
  });

  it('a damaged index (bad JSON, or another key inside) means a full rebuild', async () => {
    const store = await storeWith(site(3));
    await start({ store, htmlTransform: { run: counting().hook, key: 'k' } });
    const dir = join(store, 'versions', 'v1', 'html', (await keyDirs(store))[0]!);
    await writeFile(join(dir, 'index.json'), '{"format":1,"key":"other","pages":{}}');
    const again = counting();
    await start({ store, htmlTransform: { run: again.hook, key: 'k' } });
    expect(again.calls).toBe(3);
    await writeFile(join(dir, 'index.json'), '{not json');
    const third = counting();
    await start({ store, htmlTransform: { run: third.hook, key: 'k' } });
    expect(third.calls).toBe(3);
  });

  it('an index that is a FIFO is never waited on: the pages are rebuilt', async () => {
    const store = await storeWith(site(2));
    await start({ store, htmlTransform: { run: counting().hook, key: 'k' } });
    const dir = join(store, 'versions', 'v1', 'html', (await keyDirs(store))[0]!);
    await rm(join(dir, 'index.json'));
    execFileSync('mkfifo', [join(dir, 'index.json')]);
    expect(await readHtmlIndex(dir, 'k')).toBeNull();
  });

  it('cache poisoning: a tampered cached page is never served (500); it is removed and rebuilt while serving', async () => {
    const store = await storeWith(site(2));
    await start({ store, htmlTransform: { run: counting().hook, key: 'k' } });
    const dir = join(store, 'versions', 'v1', 'html', (await keyDirs(store))[0]!);
    const file = join(dir, `${sha256(page(1))}.html`);
    const good = await readFile(file);
    const evil = Buffer.from(good.toString().replace('page text', 'evil text'));
    expect(evil.length).toBe(good.length); // same size: only the digest can tell
    await writeFile(file, evil);
    const logs: string[] = [];
    const hook = counting();
    const { base } = await start({ store, htmlTransform: { run: hook.hook, key: 'k' }, log: (l) => logs.push(l) });
    expect(hook.calls).toBe(0);
    const r = await get(base + '/docs/p1', { 'accept-encoding': 'identity' });
    expect(r.status).toBe(500);
    expect(r.body.toString()).not.toContain('evil');
    // The repair runs in the background: wait for it by the clock (a loaded machine may take
    // seconds), then require that it ended, and ended well, before asking again.
    await vi.waitFor(() => expect(logs).toContain('airlock serve: rebuilt damaged cache files of v1'), { timeout: 15_000, interval: 10 });
    expect(logs.join('\n')).toContain(file);
    const after = await get(base + '/docs/p1', { 'accept-encoding': 'identity' });
    expect([after.status, after.body.toString()]).toEqual([200, page(1) + MARK]);
    expect(hook.calls).toBe(1);
  });

  it('a tampered index cannot put a source into the CSP: the entry is dropped and rebuilt', async () => {
    const store = await storeWith(site(2));
    await start({ store, htmlTransform: { run: counting().hook, key: 'k' } });
    const dir = join(store, 'versions', 'v1', 'html', (await keyDirs(store))[0]!);
    const idx = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')) as { pages: Record<string, { scriptHashes: string[] }> };
    idx.pages[sha256(page(1))]!.scriptHashes.push("'unsafe-inline'", 'https://evil.example');
    await writeFile(join(dir, 'index.json'), JSON.stringify(idx));
    const again = counting();
    const { base } = await start({
      store,
      htmlTransform: { run: again.hook, key: 'k' },
      csp: ({ scriptHashes }) => `script-src 'self' ${scriptHashes.join(' ')}`,
    });
    expect(again.calls).toBe(1);
    const csp = (await get(base + '/docs/p1')).headers['content-security-policy'] as string;
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('evil');
  });

  it('transformed pages keep their own ETags per coding, variants that decode to the transformed bytes, Range and 304', async () => {
    const store = await storeWith(site(2));
    const { base } = await start({ store, htmlTransform: { run: counting().hook, key: 'k' } });
    const want = page(1) + MARK;
    const br = await get(base + '/docs/p1', { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).toString()).toBe(want);
    expect(br.headers.etag).toBe(`"${sha256(want).slice(0, 32)}-br"`);
    expect(br.headers.vary).toBe('Accept-Encoding');
    const gz = await get(base + '/docs/p1', { 'accept-encoding': 'gzip' });
    expect(gunzipSync(gz.body).toString()).toBe(want);
    const nm = await get(base + '/docs/p1', { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string });
    expect(nm.status).toBe(304);
    const range = await get(base + '/docs/p1', { range: `bytes=-${MARK.length}` });
    expect(range.status).toBe(206);
    expect(range.body.toString()).toBe(MARK);
  });

  it('each page carries the CSP of the inline code it kept; other responses the policy without page hashes', async () => {
    const store = await storeWith(site(3));
    const { base } = await start({
      store,
      htmlTransform: { run: counting().hook, key: 'k' },
      csp: ({ scriptHashes }) => `script-src 'self'${scriptHashes.map((h) => ' ' + h).join('')}`,
    });
    const a = await get(base + '/docs/p1');
    const b = await get(base + '/docs/p2');
    expect(a.headers['content-security-policy']).toBe(`script-src 'self' 'sha256-${sha256(page(1)).slice(0, 43)}='`);
    expect(b.headers['content-security-policy']).toBe(`script-src 'self' 'sha256-${sha256(page(2)).slice(0, 43)}='`);
    expect((await get(base + '/app.css')).headers['content-security-policy']).toBe("script-src 'self'");
  });

  it('memory stays bounded: transformed pages go through the byte-bounded body cache', async () => {
    const store = await storeWith(site(40)); // 40 pages of ~1.5 KB, ~3 representations each
    const budget = 8 * 1024;
    const { srv, base } = await start({ store, cacheBytes: budget, htmlTransform: { run: counting().hook, key: 'k' } });
    for (let i = 1; i < 40; i++) {
      for (const enc of ['identity', 'br', 'gzip']) {
        const r = await get(`${base}/docs/p${i}`, { 'accept-encoding': enc });
        expect(r.status).toBe(200);
        expect(srv.cachedBytes()).toBeLessThanOrEqual(budget);
      }
    }
    expect(srv.cachedBytes()).toBeGreaterThan(budget / 2);
  });

  it('cold start: missing pages never hold the load, and a page is never served untransformed while its build is pending', async () => {
    const store = await storeWith(site(20));
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const order: string[] = [];
    const hook = async (html: Buffer, path: string) => {
      order.push(path);
      await gate; // every transform waits until the test opens the gate
      return { html: Buffer.concat([html, Buffer.from(MARK)]) };
    };
    const { srv, base } = await start({ store, htmlTransform: { run: hook, key: 'k' } }, true); // listening with nothing transformed
    // However the test ends, the gate opens first: a closed gate would hold close() in afterEach,
    // and the cleanup with it.
    try {
      expect(srv.current().preparing?.pages).toBe(20);
      // Both requests must have reached the handler before the gate opens: count request heads
      // (our handler is the server's first 'request' listener), then give it a moment to ask for the
      // page. Connections alone were not enough with test files running side by side.
      let heads = 0;
      srv.server.on('request', () => {
        heads++;
      });
      const asked = get(base + '/docs/p19', { 'accept-encoding': 'br' });
      const plainAsked = get(base + '/docs/p18', { 'accept-encoding': 'identity' });
      await until(() => heads >= 2, { timeoutMs: 5000, intervalMs: 10 }).catch(() => undefined);
      expect(heads).toBe(2);
      // The background build takes 3 of the 4 in-process slots; a page a reader asks for starts at
      // once in the fourth, not behind a background page. Wait for the fourth transform to begin (the
      // handler reads the file first, which a loaded machine can hold for more than a moment), then a
      // while longer: with every slot held at the gate, nothing else may begin.
      await until(() => order.length >= 4, { timeoutMs: 5000, intervalMs: 10 }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
      expect(order).toHaveLength(4);
      // Which of the four began last is a race between file reads (the background's began at
      // listen, the reader's page at its request); that one asked-for page is among them is not.
      const asked4 = order.filter((p) => p === 'docs/p18.html' || p === 'docs/p19.html');
      expect(asked4).toHaveLength(1);
      open();
      const [r, plain] = await Promise.all([asked, plainAsked]);
      expect(r.status).toBe(200);
      expect(brotliDecompressSync(r.body).toString()).toBe(page(19) + MARK);
      expect(plain.body.toString()).toBe(page(18) + MARK);
      await srv.prepared();
      expect(order).toHaveLength(20);
      // The other page asked for jumped ahead of the remaining 16: the first slot the gate frees takes
      // it, and the three others take background pages. `order` is when each transform began, after
      // its file was read, so those four may begin in any order; without the jump it would be 9th or
      // later (the background goes in path order: index.html, p1, p10, p11, …).
      const other = asked4[0] === 'docs/p19.html' ? 'docs/p18.html' : 'docs/p19.html';
      expect(order.slice(4, 8)).toContain(other);
      const idx = JSON.parse(await readFile(join(store, 'versions', 'v1', 'html', (await keyDirs(store))[0]!, 'index.json'), 'utf8')) as { pages: object };
      expect(Object.keys(idx.pages)).toHaveLength(20);
    } finally {
      open();
    }
  });

  it('cold start: the background build waits until the server listens (it must not slow the start-up), then builds every page', async () => {
    const store = await storeWith(site(12));
    const order: string[] = [];
    const hook = (html: Buffer, path: string) => {
      order.push(path);
      return { html: Buffer.concat([html, Buffer.from(MARK)]) };
    };
    const srv = await createAirlockServer({ store, lease: false, log: () => {}, htmlTransform: { run: hook, key: 'held' } });
    t.servers.push(srv);
    await new Promise((r) => setTimeout(r, 100));
    expect(order).toEqual([]); // loaded, not listening: nothing built in the background
    const base = (await srv.listen(0)).slice(0, -1);
    await srv.prepared();
    expect(order).toHaveLength(12);
    const r = await get(base + '/docs/p7', { 'accept-encoding': 'identity' });
    expect(r.body.toString()).toBe(page(7) + MARK);
  });

  it('a page whose transform fails answers 500 (never the original), and the version is still served', async () => {
    const store = await storeWith(site(3));
    const hook = (html: Buffer, path: string) => {
      if (path === 'docs/p1.html') throw new Error('boom');
      return { html: Buffer.concat([html, Buffer.from(MARK)]) };
    };
    const logs: string[] = [];
    const { base } = await start({ store, htmlTransform: { run: hook, key: 'k' }, log: (l) => logs.push(l) });
    const bad = await get(base + '/docs/p1', { 'accept-encoding': 'identity' });
    expect(bad.status).toBe(500);
    expect(bad.body.toString()).not.toContain('page text');
    expect((await get(base + '/docs/p2', { 'accept-encoding': 'identity' })).body.toString()).toBe(page(2) + MARK);
    expect(logs.join('\n')).toContain('1 failed');
  });

  it('preview (no store) builds the cache in a private folder that close() removes', async () => {
    t.root = await tempRoot();
    await writeVersion(join(t.root, 'tmpstore'), 'x', { 'index.html': page(0) });
    const siteDir = join(t.root, 'tmpstore', 'versions', 'x', 'site');
    const scratchParent = join(t.root, 'tmp');
    await mkdir(scratchParent);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = scratchParent; // os.tmpdir() reads it at each call
    try {
      const srv = await createAirlockServer({
        site: { dir: siteDir, files: [{ path: 'index.html', size: page(0).length, sha256: sha256(page(0)) }] },
        htmlTransform: { run: counting().hook },
        log: () => {},
      });
      const base = (await srv.listen(0)).slice(0, -1);
      expect((await get(base + '/', { 'accept-encoding': 'identity' })).body.toString()).toBe(page(0) + MARK);
      expect(await readdir(scratchParent)).toHaveLength(1);
      await srv.close();
      expect(await readdir(scratchParent)).toHaveLength(0);
    } finally {
      if (saved === undefined)
        delete process.env.TMPDIR; // assigning undefined would set the string "undefined"
      else process.env.TMPDIR = saved;
    }
  });
});

describe('prepared pages never go through a link', () => {
  it('a page rewritten in place (same size) or hard-linked to another file is refused by its digest: 500, never its new bytes', async () => {
    const store = await storeWith(site(3));
    const p1 = join(store, 'versions', 'v1', 'site', 'docs', 'p1.html');
    await writeFile(p1, page(1).replace('page text', 'SECRET!!!')); // the same size, other bytes
    const p2 = join(store, 'versions', 'v1', 'site', 'docs', 'p2.html');
    const outside = join(store, '..', 'outside.html');
    await writeFile(outside, page(2).replace('page text', 'SECRET!!!'));
    await rm(p2);
    await link(outside, p2);
    const logs: string[] = [];
    const { base } = await start({ store, htmlTransform: { run: counting().hook, key: 'k' }, log: (l) => logs.push(l) });
    for (const path of ['/docs/p1', '/docs/p2']) {
      const r = await get(base + path, { 'accept-encoding': 'identity' });
      expect(r.status).toBe(500);
      expect(r.body.toString()).not.toContain('SECRET');
    }
    expect(logs.join('\n')).toMatch(/2 failed.*the page is not the one the version was imported with \(its digest differs\)/);
  });

  it('a page swapped for a symbolic link to /etc/passwd, or for a FIFO, is refused from its type: never transformed, served or waited on', async () => {
    const store = await storeWith(site(3));
    const src = join(store, 'versions', 'v1', 'site', 'docs', 'p1.html');
    await rm(src);
    await symlink('/etc/passwd', src);
    const fifo = join(store, 'versions', 'v1', 'site', 'docs', 'p2.html');
    await rm(fifo);
    execFileSync('mkfifo', [fifo]);
    for (const [file, why] of [
      [src, /the page is a symbolic link/],
      [fifo, /the page is a FIFO \(named pipe\), not a regular file/],
    ] as const)
      for (const blocking of [false, true])
        await expect(
          buildPage({ src: file, path: 'docs/p1.html', sha256: 'a'.repeat(64), dir: join(store, '..', 'out'), digest: 'a'.repeat(64) }, async (b) => b, {
            blocking,
          }),
        ).rejects.toThrow(why);
    const logs: string[] = [];
    const { base } = await start({ store, htmlTransform: { run: counting().hook, key: 'k' }, log: (l) => logs.push(l) });
    for (const path of ['/docs/p1', '/docs/p2']) {
      const r = await get(base + path, { 'accept-encoding': 'identity' });
      expect(r.status).toBe(500);
      expect(r.body.toString()).not.toMatch(/root:/);
    }
    expect((await get(base + '/', { 'accept-encoding': 'identity' })).body.toString()).toBe(page(0) + MARK);
    expect(logs.join('\n')).toContain('2 failed');
  });

  it("a link swapped in for the cache's folder (or the version's) while pages are built: the page is refused, nothing is written outside", async () => {
    const root = await tempRoot('airlock-html-link-');
    try {
      const outside = join(root, 'outside');
      await mkdir(join(outside, 'k'), { recursive: true });
      await mkdir(join(root, 'versions', 'v1', 'site'), { recursive: true });
      await writeFile(join(root, 'versions', 'v1', 'site', 'index.html'), '<!doctype html><title>x</title><p>hello</p>');
      await symlink(outside, join(root, 'versions', 'v1', 'html')); // html/ swapped for a link
      const job = {
        src: join(root, 'versions', 'v1', 'site', 'index.html'),
        path: 'index.html',
        sha256: 'a'.repeat(64),
        dir: join(root, 'versions', 'v1', 'html', 'k'),
        digest: sha256('<!doctype html><title>x</title><p>hello</p>'),
      };
      for (const blocking of [false, true])
        await expect(buildPage(job, async (b) => b, { blocking })).rejects.toThrow(/html is a symbolic link, which airlock never writes through/);
      expect(await readdir(join(outside, 'k'))).toEqual([]);
      // Nor the cache's index, written once the pages are built, nor read.
      await writeFile(join(outside, 'k', 'index.json'), '{"victim":true}');
      await expect(writeHtmlIndex(job.dir, 'k', new Map())).rejects.toThrow(/html is a symbolic link/);
      expect(await readFile(join(outside, 'k', 'index.json'), 'utf8')).toBe('{"victim":true}');
      expect(await readHtmlIndex(job.dir, 'k')).toBeNull();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
