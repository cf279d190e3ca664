import { readFile, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveFeatures } from '../../../src/features/index.js';
import { createAirlockServer, type AirlockServer } from '../../../src/serve/index.js';
import { featureOptions } from '../../../src/serve/features.js';
import { SEARCH_CACHE_NAME } from '../../../src/search/cache-file.js';
import { fixtureStore } from '../../relay/helpers.js';
import { SearchPool } from '../../../src/search/pool.js';

/**
 * POST /_airlock/search/{domain} on the committed fixture site (docs.example.com, version v1)
 * through the real chain: import → serve (air-gapped, local-search on by default) → worker-built
 * index → cache file → restart.
 */
let fx: Awaited<ReturnType<typeof fixtureStore>>;
const open: AirlockServer[] = [];

async function start(o: { disable?: string[] } = {}): Promise<{ origin: string; logs: string[]; srv: AirlockServer }> {
  const logs: string[] = [];
  const log = (l: string) => void logs.push(l);
  const resolved = resolveFeatures({ deployment: 'air-gapped', disable: o.disable });
  const srv = await createAirlockServer({ store: fx.store, lease: false, log, ...featureOptions(resolved, null, { log }) });
  open.push(srv);
  const url = await srv.listen(0, '127.0.0.1');
  return { origin: url.replace(/\/$/, ''), logs, srv };
}

const post = (origin: string, body: unknown, o: { domain?: string; type?: string; raw?: string } = {}) =>
  fetch(`${origin}/_airlock/search/${o.domain ?? 'docs.example.com'}`, {
    method: 'POST',
    headers: { 'content-type': o.type ?? 'application/json' },
    body: o.raw ?? JSON.stringify(body),
  });

/** Poll until the index answers (bounded); returns the first 200 response's JSON. */
async function ready(origin: string, query = 'webhooks'): Promise<unknown> {
  const end = Date.now() + 30_000;
  for (;;) {
    const r = await post(origin, { query });
    if (r.status === 200) return r.json();
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await r.json()).toMatchObject({ building: true });
    if (Date.now() > end) throw new Error('index not ready within 30 s');
    await new Promise((res) => setTimeout(res, 50));
  }
}

interface Hit {
  content: string;
  path: string;
  metadata: { title: string; heading: string; anchor: string | null; page: string; score: number };
}

beforeAll(async () => {
  fx = await fixtureStore();
});
afterAll(async () => {
  for (const s of open.splice(0)) await s.close(1000);
  await fx?.cleanup();
});

describe('local search endpoint', () => {
  let origin: string;
  let logs: string[];
  beforeAll(async () => {
    ({ origin, logs } = await start());
  });

  it('answers the service shape, ranked, with escaped snippets and deep links; pages are served meanwhile', async () => {
    expect((await fetch(`${origin}/getting-started/`)).status).toBe(200);
    const hits = (await ready(origin)) as Hit[];
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]!.path).toMatch(/^\/api-reference\/secure-webhooks#section-\d+$/); // the page titled "Secure webhooks" first
    for (const h of hits) {
      expect(h.path.startsWith('/')).toBe(true);
      expect(typeof h.metadata.title).toBe('string');
      expect(h.content).toContain('<mark>');
      expect(h.content.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/); // nothing but <mark> is markup
    }
    const scores = hits.map((h) => h.metadata.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(logs.some((l) => /local search index of v1 built/.test(l))).toBe(true);
  });

  it('places the hit in the section that matches: "webhooks step 3" opens #section-3', async () => {
    const hits = (await (await post(origin, { query: 'webhooks step 3', pageSize: 3 })).json()) as Hit[];
    expect(hits[0]!.path).toBe('/api-reference/secure-webhooks#section-3');
    expect(hits[0]!.metadata.heading).toBe('Webhooks: step 3');
    expect(hits.length).toBeLessThanOrEqual(3);
  });

  it('prefix and typo tolerance; filter.path narrows; a word nowhere finds nothing', async () => {
    const full = ((await (await post(origin, { query: 'webhooks' })).json()) as Hit[]).map((h) => h.metadata.page);
    const prefix = ((await (await post(origin, { query: 'webho' })).json()) as Hit[]).map((h) => h.metadata.page);
    const typo = ((await (await post(origin, { query: 'webhoks' })).json()) as Hit[]).map((h) => h.metadata.page);
    expect(prefix[0]).toBe(full[0]);
    expect(typo[0]).toBe(full[0]);
    const filtered = (await (await post(origin, { query: 'webhooks', filter: { path: '/getting-started/' } })).json()) as Hit[];
    expect(filtered.every((h) => h.metadata.page.startsWith('/getting-started/'))).toBe(true);
    expect(await (await post(origin, { query: 'zzqqxxnotaword' })).json()).toEqual([]);
    // the reader's language and page order copies of a page; on a one-language site they change nothing
    const withReader = ((await (await post(origin, { query: 'webhooks', filter: { language: 'en-US' }, page: '/getting-started/' })).json()) as Hit[]).map(
      (h) => h.metadata.page,
    );
    expect(withReader).toEqual(full);
  });

  it('refuses what is not a search: wrong domain 404, GET 405, not JSON 415/400, too large 413, bad fields 400', async () => {
    expect((await post(origin, { query: 'x' }, { domain: 'other.example.com' })).status).toBe(404);
    const get = await fetch(`${origin}/_airlock/search/docs.example.com`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toContain('POST');
    expect((await post(origin, null, { type: 'text/plain', raw: '{"query":"x"}' })).status).toBe(415);
    expect((await post(origin, null, { raw: '{"query":' })).status).toBe(400);
    expect((await post(origin, { query: 'x'.repeat(9000) })).status).toBe(413);
    for (const bad of [
      {},
      { query: '' },
      { query: 5 },
      { query: 'x', pageSize: 0 },
      { query: 'x', pageSize: 51 },
      { query: 'x', pageSize: 1.5 },
      { query: 'x', filter: 'a' },
      { query: 'x', filter: { path: 'no-slash' } },
      { query: 'x', filter: { language: 'en us' } },
      { query: 'x', filter: { language: 5 } },
      { query: 'x', page: 'no-slash' },
      { query: 'x', page: '/' + 'a'.repeat(2000) },
      [],
      'q',
      null,
    ]) {
      const r = await post(origin, bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(((await r.json()) as { error: string }).error).toMatch(/search request|body/);
    }
  });

  it('fuzz: mutated bodies (flips, truncations, huge and nested values) get 400/413, never 500, and the server keeps serving', async () => {
    const valid = JSON.stringify({ query: 'webhooks rate limits', pageSize: 5, filter: { path: '/api-reference/' } });
    let seed = 17;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    const bodies: string[] = [];
    for (let i = 0; i < 150; i++) {
      const b = Buffer.from(valid);
      const kind = i % 5;
      if (kind === 0)
        for (let k = 0; k < 1 + rnd(4); k++) {
          const at = rnd(b.length);
          b[at] = b[at]! ^ (1 << rnd(8));
        }
      if (kind === 1) {
        bodies.push(valid.slice(0, rnd(valid.length)));
        continue;
      }
      if (kind === 2) {
        bodies.push(JSON.stringify({ query: 'a'.repeat(rnd(2) ? 501 : 7000), pageSize: 5 }));
        continue;
      }
      if (kind === 3) {
        const d = 1 + rnd(3000);
        bodies.push(`{"query":"x","filter":${'['.repeat(d)}${']'.repeat(d)}}`);
        continue;
      }
      if (kind === 4) {
        bodies.push(JSON.stringify({ query: 'x', pageSize: [1e308, -1, '5', null, true][rnd(5)], filter: { path: '/'.repeat(rnd(400)) } }));
        continue;
      }
      bodies.push(b.toString('latin1'));
    }
    for (const raw of bodies) {
      const r = await post(origin, null, { raw });
      expect([200, 400, 413], raw.slice(0, 80)).toContain(r.status);
      if (r.status === 200) expect(Array.isArray(await r.json())).toBe(true);
      else expect(typeof ((await r.json()) as { error: string }).error).toBe('string');
    }
    expect((await fetch(`${origin}/_airlock/health`)).status).toBe(200);
    expect((await post(origin, { query: 'webhooks' })).status).toBe(200);
  });
});

describe('the index cache file', () => {
  it('a restart loads the index from its cache file; a damaged file is rebuilt, never trusted', async () => {
    const dir = join(fx.store, 'versions', 'v1', 'search');
    const first = await start();
    await ready(first.origin);
    await first.srv.close(1000);
    expect(await readdir(dir)).toEqual([SEARCH_CACHE_NAME]); // no temp files left

    const second = await start();
    const hits = (await ready(second.origin)) as Hit[];
    expect(second.logs.some((l) => /local search index of v1 loaded from its cache file/.test(l))).toBe(true);
    await second.srv.close(1000);

    const file = join(dir, SEARCH_CACHE_NAME);
    const bytes = await readFile(file);
    const at = bytes.indexOf('\n') + 20; // a bit in the body's first line
    bytes[at] = bytes[at]! ^ 0x01;
    await writeFile(file, bytes);
    const third = await start();
    expect(await ready(third.origin)).toEqual(hits);
    expect(third.logs.some((l) => /cache file not used \((body digest does not match its trailer|header is not JSON)\); rebuilt/.test(l))).toBe(true);
    await third.srv.close(1000);

    const good = await readFile(file);
    await writeFile(file, good.subarray(0, good.length - 30)); // truncated: the trailer is cut
    const fourth = await start();
    expect(await ready(fourth.origin)).toEqual(hits);
    expect(fourth.logs.some((l) => /cache file not used \(truncated/.test(l))).toBe(true);
    await fourth.srv.close(1000);

    await writeFile(file, '{"format":"airlock-search-index/1","key":"x"}\n{}\n'); // another format
    const fifth = await start();
    expect(await ready(fifth.origin)).toEqual(hits);
    expect(fifth.logs.some((l) => /cache file not used \(format "airlock-search-index\/1" is not/.test(l))).toBe(true);
  });
});

describe('--disable local-search', () => {
  it('no dialog script in pages, and the search API and script answer 404', async () => {
    const { origin } = await start({ disable: ['local-search'] });
    const features = (await (await fetch(`${origin}/_airlock/features`)).json()) as { features: { localSearch: boolean } };
    expect(features.features.localSearch).toBe(false);
    const html = await (await fetch(`${origin}/getting-started/`)).text();
    expect(html).not.toContain('/_airlock/search.js');
    expect((await post(origin, { query: 'webhooks' })).status).toBe(404);
    expect((await fetch(`${origin}/_airlock/search.js`)).status).toBe(404);
    const on = await start();
    expect(await (await fetch(`${on.origin}/getting-started/`)).text()).toContain(
      '<script src="/_airlock/search.js" defer data-airlock="local-search"></script>',
    );
    const js = await fetch(`${on.origin}/_airlock/search.js`);
    expect(js.headers.get('content-type')).toContain('text/javascript');
  });
});

describe('search indexes shared by many sites (serve --library)', () => {
  const sites = async (pool: SearchPool, n: number) =>
    Promise.all(
      Array.from({ length: n }, async () => {
        const log = () => {};
        const srv = await createAirlockServer({
          store: fx.store,
          lease: false,
          log,
          ...featureOptions(resolveFeatures({}), null, { log, searchOnDemand: true, searchPool: pool }),
        });
        open.push(srv);
        return (await srv.listen(0, '127.0.0.1')).replace(/\/$/, '');
      }),
    );

  it("one worker holds every site's index: each searched once, all answer at once after", async () => {
    const pool = new SearchPool({ workers: 1, budgetBytes: Number.POSITIVE_INFINITY });
    const servers = await sites(pool, 5);
    for (const s of servers) await ready(s);
    expect(pool.workers).toBe(1);
    expect(pool.bytes).toBeGreaterThan(0);
    for (const s of servers) expect((await post(s, { query: 'webhooks' })).status).toBe(200);
    await pool.close();
  }, 60_000);

  it('past its budget the least recently searched index is let go, and loaded again at its next query', async () => {
    const pool = new SearchPool({ workers: 2, budgetBytes: 1 });
    const servers = await sites(pool, 2);
    const first = await ready(servers[0]!);
    await ready(servers[1]!); // the first site's index is let go: only one fits
    const again = await post(servers[0]!, { query: 'webhooks' });
    expect(again.status).toBe(503); // being loaded again (from its cache file), not an error
    expect(await ready(servers[0]!)).toEqual(first);
    await pool.close();
  }, 60_000);

  it('an index its worker cannot hold fails in words with a Retry-After; the server keeps serving', async () => {
    // 6 MB: enough to start a worker (below ~2 MB Node 24 aborts the whole process while creating it), too little to build an index.
    const pool = new SearchPool({ workers: 1, budgetBytes: Number.POSITIVE_INFINITY, maxHeapMb: 6 });
    const [origin] = await sites(pool, 1);
    const end = Date.now() + 30_000;
    let r = await post(origin!, { query: 'webhooks' });
    while (r.status === 503 && ((await r.clone().json()) as { building: boolean }).building && Date.now() < end) {
      await new Promise((res) => setTimeout(res, 50));
      r = await post(origin!, { query: 'webhooks' });
    }
    expect(r.status).toBe(503);
    const body = (await r.json()) as { building: boolean; error: string };
    expect(body).toEqual({ building: false, error: "search is unavailable: the index needs more memory than a search worker's 6 MB" });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await fetch(`${origin}/`)).status).toBe(200);
    await pool.close();
  }, 60_000);
});
