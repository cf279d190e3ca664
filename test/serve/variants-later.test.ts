import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { readFile, readdir } from 'node:fs/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createAirlockServer } from '../../src/serve/index.js';
import { listVersions } from '../../src/store/index.js';
import { serveCaseAfterEach, get, setActive, tempRoot, writeVersion, type SiteFiles } from './helpers.js';

/**
 * `airlock import` no longer precompresses; the server does it in the background after the HTML.
 * Until an asset's variants are durable it is compressed on request (compress-now.test.ts) —
 * correct bytes at every moment — and then its variant files are served; `list` says what is
 * still pending.
 */
const t = serveCaseAfterEach();

const css = (i: number) => `.c${i}{color:#${(i * 4099).toString(16).padStart(6, '0').slice(0, 6)};margin:${i}px}\n`.repeat(200);
function site(n: number): SiteFiles {
  const s: SiteFiles = { 'index.html': '<!doctype html><title>home</title><p>' + 'text '.repeat(400) + '</p>' };
  for (let i = 0; i < n; i++) s[`assets/a${i}.css`] = css(i);
  s['assets/tiny.js'] = 'x=1'; // below the size worth a variant: stays identity
  return s;
}

async function storeWithout(files: SiteFiles): Promise<string> {
  t.root = await tempRoot();
  const store = join(t.root, 'store');
  await writeVersion(store, 'v1', files, { variants: false });
  await setActive(store, 'v1');
  return store;
}

describe('a server precompresses a version whose import did not', () => {
  it('serves the exact bytes while the build runs, then br/gzip variants; list says pending, then done', async () => {
    const files = site(60);
    const store = await storeWithout(files);
    expect((await listVersions(store))[0]!.precompressed).toBe(false);
    const srv = await createAirlockServer({ store, lease: false, log: () => {} });
    t.servers.push(srv);
    const base = (await srv.listen(0)).slice(0, -1);
    // Hammer the assets while the background build runs: every answer decodes to the original.
    const codings = new Set<string>();
    let prepared = false;
    const finished = srv.prepared().then(() => (prepared = true));
    for (let round = 0; round < 200 && !prepared; round++) {
      const i = round % 60;
      const r = await get(`${base}/assets/a${i}.css`, { 'accept-encoding': round % 2 ? 'br' : 'gzip' });
      expect(r.status).toBe(200);
      const enc = String(r.headers['content-encoding'] ?? 'identity');
      codings.add(enc);
      const plain = enc === 'br' ? brotliDecompressSync(r.body) : enc === 'gzip' ? gunzipSync(r.body) : r.body;
      expect(plain.toString()).toBe(css(i));
      expect(r.headers.vary).toMatch(/accept-encoding/i);
    }
    await finished;
    for (const enc of ['br', 'gzip'] as const) {
      const r = await get(`${base}/assets/a7.css`, { 'accept-encoding': enc });
      expect(r.headers['content-encoding']).toBe(enc);
      expect((enc === 'br' ? brotliDecompressSync(r.body) : gunzipSync(r.body)).toString()).toBe(css(7));
    }
    const tiny = await get(`${base}/assets/tiny.js`, { 'accept-encoding': 'br' });
    expect(tiny.headers['content-encoding']).toBeUndefined();
    expect((await listVersions(store))[0]!.precompressed).toBe(true);
    const idx = JSON.parse(await readFile(join(store, 'versions', 'v1', 'variants', 'index.json'), 'utf8')) as { files: object };
    expect(Object.keys(idx.files)).toHaveLength(60); // the assets, never the HTML (served transformed)
    expect((await readdir(join(store, 'versions', 'v1', 'variants'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a restarted server finds the published variants and precompresses nothing again', async () => {
    const store = await storeWithout(site(5));
    const logs: string[] = [];
    const a = await createAirlockServer({ store, lease: false, log: (l) => logs.push(l) });
    await a.listen(0);
    await a.prepared();
    await a.close();
    expect(logs.filter((l) => l.includes('precompressed 5 asset(s) of v1'))).toHaveLength(1);
    const b = await createAirlockServer({ store, lease: false, log: (l) => logs.push(l) });
    t.servers.push(b);
    const base = (await b.listen(0)).slice(0, -1);
    await b.prepared();
    expect(logs.filter((l) => l.includes('precompressed'))).toHaveLength(1);
    expect((await get(`${base}/assets/a3.css`, { 'accept-encoding': 'br' })).headers['content-encoding']).toBe('br');
  });

  it('a starting server builds nothing before it listens (cold start stays fast)', async () => {
    const store = await storeWithout(site(5));
    const srv = await createAirlockServer({ store, lease: false, log: () => {} });
    t.servers.push(srv);
    await new Promise((r) => setTimeout(r, 150));
    expect((await listVersions(store))[0]!.precompressed).toBe(false);
    await readdir(join(store, 'versions', 'v1', 'variants')).then(
      (f) => expect(f).toEqual([]),
      (err: NodeJS.ErrnoException) => expect(err.code).toBe('ENOENT'),
    );
    await srv.listen(0);
    await srv.prepared();
    expect((await listVersions(store))[0]!.precompressed).toBe(true);
  });
});
