import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServeMetrics } from './metrics-types.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { latencyHistogram } from './metrics-latency.js';

/**
 * `GET /_airlock/metrics` (serve --metrics): Prometheus text format from prom-client, on a private
 * registry. Per request only two clock reads and increments of plain arrays that prom-client reads
 * (and writes out) when scraped, done after the handler returns: no per-request listener for a
 * response that has already ended (a second 'finish' listener alone cost 2–4 % of throughput,
 * measured with both servers loaded at once). Bytes are counted per connection
 * (socket.bytesWritten when it closes or at the scrape). No label ever holds a path (unbounded
 * cardinality, and a path is attacker-chosen). Everything else (version, switches, imports, mirror downloads) is updated when
 * it happens, off the request path. With --workers N each worker answers for itself.
 */
export type { ServeMetrics } from './metrics-types.js';

/** The most sites a library's metrics name (a folder name each, validated as a domain: operator-chosen, not reader-chosen). */
export const MAX_SITE_LABELS = 1000;

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'other'] as const;
const METHOD_INDEX = new Map<string, number>(METHODS.map((m, i) => [m, i]));
const CLASSES = ['other', '1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const classIndex = (status: number) => (status >= 100 && status < 600 ? Math.floor(status / 100) : 0);
const classOf = (status: number) => CLASSES[classIndex(status)]!;

/**
 * defaultMetrics: also the process metrics (CPU, memory, event-loop lag, GC): off by default, their GC and event-loop observers cost throughput.
 * bySite: a library's (requests, served version and switches labelled by site: `site(domain)`).
 */
export function createMetrics(o: { defaultMetrics?: boolean; now?: () => number; bySite?: boolean } = {}): ServeMetrics {
  const registry = new Registry();
  if (o.defaultMetrics === true) collectDefaultMetrics({ register: registry, prefix: 'airlock_process_' });
  const bySite = o.bySite === true;
  const siteLabel = bySite ? ['site'] : [];
  // The request path only adds to plain numbers; prom-client reads them when scraped (collect()).
  const tallies = new Map<string, Float64Array>();
  const tallyOf = (site: string): Float64Array => {
    let t = tallies.get(site);
    if (t === undefined) {
      if (tallies.size > MAX_SITE_LABELS && site !== 'other') return tallyOf('other');
      t = new Float64Array(METHODS.length * CLASSES.length);
      tallies.set(site, t);
    }
    return t;
  };
  const tally = tallyOf('');
  const open = new Set<Socket>();
  let closedBytes = 0;
  new Counter({
    name: 'airlock_http_requests_total',
    help: 'HTTP requests answered, by method and status class',
    labelNames: [...siteLabel, 'method', 'status_class'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [site, t] of tallies) {
        for (let i = 0; i < t.length; i++) {
          const labels = { method: METHODS[Math.floor(i / CLASSES.length)]!, status_class: CLASSES[i % CLASSES.length]! };
          if (t[i]! > 0) this.inc(bySite ? { site: site || '_library', ...labels } : labels, t[i]!);
        }
      }
    },
  });
  const latency = latencyHistogram(registry);
  new Counter({
    name: 'airlock_http_response_bytes_total',
    help: 'Bytes written to client connections (headers and bodies; over TLS, the encrypted records)',
    registers: [registry],
    collect() {
      let sum = closedBytes;
      for (const s of open) sum += s.bytesWritten ?? 0;
      this.reset();
      this.inc(sum);
    },
  });
  const version = new Gauge({
    name: 'airlock_served_version_info',
    help: 'The version this process serves (value 1)',
    labelNames: [...siteLabel, 'version'],
    registers: [registry],
  });
  const switches = new Counter({
    name: 'airlock_version_switches_total',
    help: 'Switches of the served version since start',
    labelNames: siteLabel,
    registers: [registry],
  });
  const lastSwitch = new Gauge({
    name: 'airlock_last_switch_timestamp_seconds',
    help: 'Unix time of the last switch (0: none yet)',
    labelNames: siteLabel,
    registers: [registry],
  });
  const imports = new Histogram({
    name: 'airlock_import_duration_seconds',
    help: 'Download, verification and import of a version by this process',
    labelNames: ['result'],
    registers: [registry],
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
  });
  const mirror = new Counter({
    name: 'airlock_mirror_downloads_total',
    help: 'Package downloads answered by the mirror, by status class',
    labelNames: ['status_class'],
    registers: [registry],
  });
  const refusedC = new Counter({
    name: 'airlock_follow_refused_versions_total',
    help: 'Versions a follower refused (verification failed): never switched to',
    registers: [registry],
  });
  if (!bySite) lastSwitch.set(0);

  function count(res: ServerResponse, t0: number, tally: Float64Array): void {
    const m = METHOD_INDEX.get(res.req.method ?? '') ?? METHODS.length - 1;
    const k = m * CLASSES.length + classIndex(res.statusCode);
    tally[k] = tally[k]! + 1;
    latency.observe((performance.now() - t0) / 1000);
  }
  const closed = function (this: Socket): void {
    open.delete(this);
    closedBytes += this.bytesWritten ?? 0;
  };
  const now = o.now ?? Date.now;
  const currents = new Map<string, string>();
  /** Count into `tally`, the version served under `labels` (a site's, or none). */
  const counting = (t: Float64Array, key: string, labels: Record<string, string>): Pick<ServeMetrics, 'done' | 'serving'> => ({
    done(res, t0) {
      if (res.writableEnded) return count(res, t0, t);
      // A closure, not the start time set on the response: a property added to some responses gives
      // Node's HTTP code a second response shape to handle on every request after.
      res.once('finish', () => count(res, t0, t));
    },
    serving(v) {
      const current = currents.get(key);
      if (current === v) return;
      if (current !== undefined) {
        version.remove({ ...labels, version: current });
        switches.inc(labels);
        lastSwitch.set(labels, now() / 1000);
      } else if (bySite) {
        switches.inc(labels, 0);
        lastSwitch.set(labels, 0);
      }
      currents.set(key, v);
      version.set({ ...labels, version: v }, 1);
    },
  });
  const sites = new Map<string, ServeMetrics>();
  const m: ServeMetrics = {
    registry,
    contentType: registry.contentType,
    ...counting(tally, '', {}),
    attach(server) {
      server.on('connection', (s: Socket) => {
        open.add(s);
        s.once('close', closed);
      });
    },
    importDone: (seconds, result) => imports.observe({ result }, seconds),
    mirrorDownload: (status) => mirror.inc({ status_class: classOf(status) }),
    refused: () => refusedC.inc(),
    text: () => registry.metrics(),
    site(domain) {
      if (!bySite) return m;
      let view = sites.get(domain);
      if (view === undefined) {
        const named = sites.size < MAX_SITE_LABELS ? domain : 'other';
        view = { ...m, ...counting(tallyOf(named), named, { site: named }) };
        if (named === domain) sites.set(domain, view);
      }
      return view;
    },
  };
  return m;
}
