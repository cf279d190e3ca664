import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { createAirlockServer, createMetrics } from '../../src/serve/index.js';
import { serveCaseAfterEach, get, labelledSite, rawRequest, setActive, tempRoot, writeVersion } from './helpers.js';
import { mutants } from '../helpers/mutate.js';
import { createLibraryServer } from '../../src/serve/library.js';
import { MAX_SITE_LABELS } from '../../src/serve/metrics.js';

const t = serveCaseAfterEach();

async function serveTwo(metrics = true) {
  t.root = await tempRoot('airlock-metrics-');
  const store = join(t.root, 'store');
  await writeVersion(store, 'v1', labelledSite('v1'));
  await writeVersion(store, 'v2', labelledSite('v2'));
  await setActive(store, 'v1');
  t.srv = await createAirlockServer({ store, metrics: metrics ? createMetrics({ defaultMetrics: false }) : undefined, pollMs: 50 });
  const base = (await t.srv.listen(0)).slice(0, -1);
  return { store, base, port: Number(new URL(base).port) };
}

/** One sample's value from the Prometheus text, or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('GET /_airlock/metrics', () => {
  it('counts requests by method and status class, latency and bytes, in Prometheus text format', async () => {
    const { base } = await serveTwo();
    for (let i = 0; i < 3; i++) expect((await get(base + '/guide/intro')).status).toBe(200);
    expect((await get(base + '/no-such-page')).status).toBe(404);
    expect((await get(base + '/', {}, 'HEAD')).status).toBe(200);
    expect((await get(base + '/', {}, 'DELETE')).status).toBe(405);
    const r = await get(base + '/_airlock/metrics');
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = r.body.toString();
    expect(sample(text, 'airlock_http_requests_total', 'method="GET",status_class="2xx"')).toBe(3);
    expect(sample(text, 'airlock_http_requests_total', 'method="GET",status_class="4xx"')).toBe(1);
    expect(sample(text, 'airlock_http_requests_total', 'method="HEAD",status_class="2xx"')).toBe(1);
    expect(sample(text, 'airlock_http_requests_total', 'method="DELETE",status_class="4xx"')).toBe(1);
    expect(sample(text, 'airlock_http_request_duration_seconds_count')).toBe(6);
    // The latency histogram in Prometheus' form: cumulative buckets ending at +Inf = the count.
    expect(text).toContain('# TYPE airlock_http_request_duration_seconds histogram');
    const buckets = text.split('\n').filter((l) => l.startsWith('airlock_http_request_duration_seconds_bucket{le="'));
    expect(buckets.map((l) => /le="([^"]+)"/.exec(l)![1])).toEqual([
      '0.0005',
      '0.001',
      '0.0025',
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '10',
      '+Inf',
    ]);
    const counts = buckets.map((l) => Number(l.split(' ').pop()));
    expect(counts.every((n, i) => i === 0 || n >= counts[i - 1]!)).toBe(true);
    expect(counts.at(-1)).toBe(6);
    expect(sample(text, 'airlock_http_request_duration_seconds_sum')).toBeGreaterThan(0);
    expect(sample(text, 'airlock_http_response_bytes_total')).toBeGreaterThan(500);
    expect(sample(text, 'airlock_served_version_info', 'version="v1"')).toBe(1);
    expect(sample(text, 'airlock_version_switches_total')).toBe(0);
    expect(sample(text, 'airlock_last_switch_timestamp_seconds')).toBe(0);
    // A response that ends after its handler returned (the scrape itself, an async route) is
    // counted at its 'finish': the next scrape sees the first one.
    const again = (await get(base + '/_airlock/metrics')).body.toString();
    expect(sample(again, 'airlock_http_requests_total', 'method="GET",status_class="2xx"')).toBe(4);
    expect(sample(again, 'airlock_http_request_duration_seconds_count')).toBe(7);
  });

  it('counts every byte written, on connections closed and on keep-alive connections still open at the scrape', async () => {
    const { base, port } = await serveTwo();
    const bytesNow = async () => sample((await get(base + '/_airlock/metrics')).body.toString(), 'airlock_http_response_bytes_total')!;
    // A closed connection: exactly the bytes the client received, plus the scrape answers (each
    // counted once its connection has closed, so read twice and take the difference).
    await get(base + '/guide/intro'); // every series exists from here on: scrape answers differ by a few digits only
    await bytesNow();
    const before = await bytesNow();
    const closed = await rawRequest(port, 'GET /guide/intro HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(closed.status).toBe(200);
    const scrape1 = await bytesNow();
    const scrape2 = await bytesNow();
    const scrapeSize = scrape2 - scrape1;
    expect(scrape1 - before - scrapeSize).toBeGreaterThanOrEqual(closed.raw.length - 16);
    expect(scrape1 - before - scrapeSize).toBeLessThanOrEqual(closed.raw.length + 16);
    // An open keep-alive connection: its bytes are in the next scrape already.
    const { connect } = await import('node:net');
    const sock = connect(port, '127.0.0.1');
    try {
      const got = await new Promise<number>((resolve, reject) => {
        let all = Buffer.alloc(0);
        const timer = setTimeout(() => reject(new Error('no whole answer within 5 s')), 5000);
        sock.on('data', (c: Buffer) => {
          all = Buffer.concat([all, c]);
          const sep = all.indexOf('\r\n\r\n');
          const length = /content-length: *(\d+)/i.exec(all.subarray(0, Math.max(sep, 0)).toString('latin1'));
          if (sep !== -1 && length && all.length >= sep + 4 + Number(length[1])) {
            clearTimeout(timer);
            resolve(all.length);
          }
        });
        sock.on('error', reject);
        sock.write('GET /guide/intro HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      const after = await bytesNow();
      expect(after - scrape2).toBeGreaterThanOrEqual(got + scrapeSize - 16);
    } finally {
      sock.destroy();
    }
  });

  it('metric cardinality attack: request paths and odd methods never become labels', async () => {
    const { base, port } = await serveTwo();
    for (let i = 0; i < 20; i++) await get(`${base}/attacker-path-${i}?q=${i}`);
    await rawRequest(port, 'BREW /pot-xyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const text = (await get(base + '/_airlock/metrics')).body.toString();
    expect(text).not.toContain('attacker-path');
    expect(text).not.toContain('pot-xyz');
    expect(text).not.toContain('BREW');
    const series = text.split('\n').filter((l) => l.startsWith('airlock_http_requests_total{'));
    expect(series.length).toBeLessThanOrEqual(4);
  });

  it('a switch moves the version info, counts the switch and stamps its time', async () => {
    const { store, base } = await serveTwo();
    const t0 = Date.now() / 1000;
    await setActive(store, 'v2');
    await t.srv!.recheck();
    const text = (await get(base + '/_airlock/metrics')).body.toString();
    expect(sample(text, 'airlock_served_version_info', 'version="v2"')).toBe(1);
    expect(sample(text, 'airlock_served_version_info', 'version="v1"')).toBeUndefined();
    expect(sample(text, 'airlock_version_switches_total')).toBe(1);
    expect(sample(text, 'airlock_last_switch_timestamp_seconds')).toBeGreaterThanOrEqual(Math.floor(t0));
  });

  it('is absent (404) unless metrics are on', async () => {
    const { base } = await serveTwo(false);
    expect((await get(base + '/_airlock/metrics')).status).toBe(404);
  });

  it('mutated requests for /_airlock/metrics never crash the server or answer 5xx', async () => {
    const { base, port } = await serveTwo();
    const seed = Buffer.from('GET /_airlock/metrics?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\nConnection: close\r\n\r\n');
    // In parallel, each bounded: a truncated request gets no answer and is given up after 1.5 s.
    const all = [...mutants(seed, 60)];
    const answers = await Promise.all(all.map((m) => rawRequest(port, m.bytes, 1500).catch(() => null)));
    answers.forEach((r, i) => {
      if (r !== null && r.status) expect(r.status, `mutant ${all[i]!.index} (${all[i]!.mutation})`).toBeLessThan(500);
    });
    expect((await get(base + '/_airlock/metrics')).status).toBe(200);
  });
});

describe('a library’s metrics, labelled by site', () => {
  it('each site counts its own requests, served version and switches; the library’s own pages count as _library', async () => {
    t.root = await tempRoot('airlock-metrics-lib-');
    const lib = join(t.root, 'lib');
    for (const d of ['a.example', 'b.example']) {
      await writeVersion(join(lib, d), 'v1', labelledSite('v1'), { domain: d });
      await writeVersion(join(lib, d), 'v2', labelledSite('v2'), { domain: d });
      await setActive(join(lib, d), 'v1');
    }
    const metrics = createMetrics({ bySite: true });
    const srv = await createLibraryServer({
      library: lib,
      siteOptions: (d) => ({ lease: false, metrics: metrics.site(d) }),
      metrics,
      log: () => {},
      pollMs: 3_600_000,
    });
    try {
      const base = (await srv.listen()).replace(/\/$/, '');
      for (let i = 0; i < 2; i++) expect((await get(base + '/guide/intro', { Host: 'a.example' })).status).toBe(200);
      expect((await get(base + '/b.example/guide/intro')).status).toBe(200);
      expect((await get(base + '/b.example/nope')).status).toBe(404);
      expect((await get(base + '/')).status).toBe(200);
      await setActive(join(lib, 'a.example'), 'v2');
      await srv.recheck();
      const text = (await get(base + '/_airlock/metrics')).body.toString();
      expect(sample(text, 'airlock_http_requests_total', 'site="a.example",method="GET",status_class="2xx"')).toBe(2);
      expect(sample(text, 'airlock_http_requests_total', 'site="b.example",method="GET",status_class="2xx"')).toBe(1);
      expect(sample(text, 'airlock_http_requests_total', 'site="b.example",method="GET",status_class="4xx"')).toBe(1);
      expect(sample(text, 'airlock_http_requests_total', 'site="_library",method="GET",status_class="2xx"')).toBe(1);
      expect(sample(text, 'airlock_served_version_info', 'site="a.example",version="v2"')).toBe(1);
      expect(sample(text, 'airlock_served_version_info', 'site="a.example",version="v1"')).toBeUndefined();
      expect(sample(text, 'airlock_served_version_info', 'site="b.example",version="v1"')).toBe(1);
      expect(sample(text, 'airlock_version_switches_total', 'site="a.example"')).toBe(1);
      expect(sample(text, 'airlock_version_switches_total', 'site="b.example"')).toBe(0);
      // The same numbers under a site's own host name.
      expect((await get(base + '/_airlock/metrics', { Host: 'b.example' })).body.toString()).toContain('site="a.example"');
    } finally {
      await srv.close(1000);
    }
  });

  it('bounded cardinality: past MAX_SITE_LABELS sites, the rest count as site="other"', async () => {
    const metrics = createMetrics({ bySite: true });
    for (let i = 0; i <= MAX_SITE_LABELS + 5; i++) metrics.site(`s${i}.example`).serving('v1');
    const text = await metrics.text();
    const sites = new Set(text.split('\n').flatMap((l) => (l.startsWith('airlock_served_version_info{') ? [/site="([^"]+)"/.exec(l)![1]] : [])));
    expect(sites.size).toBe(MAX_SITE_LABELS + 1);
    expect(sites.has('other')).toBe(true);
    expect(sites.has(`s${MAX_SITE_LABELS + 5}.example`)).toBe(false);
  });
});
