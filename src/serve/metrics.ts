import type { ServerResponse } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';

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
export interface ServeMetrics {
  registry: Registry;
  /**
   * Count one request once its handler has returned (`t0`: performance.now() at its start): at
   * once when the response has ended (in-memory bodies: the usual case), else at its 'finish'
   * (streamed files, the app's routes).
   */
  done(res: ServerResponse, t0: number): void;
  /** Count the bytes of every connection the server accepts (per connection, not per request). */
  attach(server: NetServer): void;
  /** The version now served; counts a switch when it differs from the previous one. */
  serving(version: string): void;
  importDone(seconds: number, result: 'ok' | 'failed'): void;
  mirrorDownload(status: number): void;
  /** Versions a follower refused (verification failed): the fleet's report. */
  refused(version: string): void;
  text(): Promise<string>;
  contentType: string;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'other'] as const;
const METHOD_INDEX = new Map<string, number>(METHODS.map((m, i) => [m, i]));
const CLASSES = ['other', '1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const classIndex = (status: number) => (status >= 100 && status < 600 ? Math.floor(status / 100) : 0);
const classOf = (status: number) => CLASSES[classIndex(status)]!;
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

interface Timed extends ServerResponse {
  airlockT0?: number;
}

/** defaultMetrics: also the process metrics (CPU, memory, event-loop lag, GC): off by default, their GC and event-loop observers cost throughput. */
export function createMetrics(o: { defaultMetrics?: boolean; now?: () => number } = {}): ServeMetrics {
  const registry = new Registry();
  if (o.defaultMetrics === true) collectDefaultMetrics({ register: registry, prefix: 'airlock_process_' });
  // The request path only adds to plain numbers; prom-client reads them when scraped (collect()).
  const tally = new Float64Array(METHODS.length * CLASSES.length);
  const open = new Set<Socket>();
  let closedBytes = 0;
  new Counter({
    name: 'airlock_http_requests_total',
    help: 'HTTP requests answered, by method and status class',
    labelNames: ['method', 'status_class'],
    registers: [registry],
    collect() {
      this.reset();
      for (let i = 0; i < tally.length; i++) {
        if (tally[i]! > 0) this.inc({ method: METHODS[Math.floor(i / CLASSES.length)]!, status_class: CLASSES[i % CLASSES.length]! }, tally[i]!);
      }
    },
  });
  // The latency histogram too is plain numbers, exported in prom-client's histogram form (the
  // registry writes the text): prom-client's Histogram#observe costs 0.18 µs and allocates a
  // closure and a label object per call (measured alone), the bucket search here 0.01 µs.
  const latencyCounts = new Float64Array(BUCKETS.length + 1);
  let latencySum = 0;
  const LATENCY = 'airlock_http_request_duration_seconds';
  const LATENCY_HELP = 'Time from the request to the end of its response (the whole body handed to the socket)';
  const latencyExport = () => {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    let acc = 0;
    BUCKETS.forEach((le, i) => values.push({ labels: { le }, value: (acc += latencyCounts[i]!), metricName: `${LATENCY}_bucket` }));
    const count = acc + latencyCounts[BUCKETS.length]!;
    values.push(
      { labels: { le: '+Inf' }, value: count, metricName: `${LATENCY}_bucket` },
      { labels: {}, value: latencySum, metricName: `${LATENCY}_sum` },
      { labels: {}, value: count, metricName: `${LATENCY}_count` },
    );
    return { name: LATENCY, help: LATENCY_HELP, type: 'histogram' as const, values, aggregator: 'sum' as const };
  };
  registry.registerMetric({
    name: LATENCY,
    help: LATENCY_HELP,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => latencyExport(),
    reset() {
      latencyCounts.fill(0);
      latencySum = 0;
    },
  } as unknown as Metric);
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
    labelNames: ['version'],
    registers: [registry],
  });
  const switches = new Counter({ name: 'airlock_version_switches_total', help: 'Switches of the served version since start', registers: [registry] });
  const lastSwitch = new Gauge({ name: 'airlock_last_switch_timestamp_seconds', help: 'Unix time of the last switch (0: none yet)', registers: [registry] });
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
  lastSwitch.set(0);

  function count(res: ServerResponse, t0: number): void {
    const m = METHOD_INDEX.get(res.req.method ?? '') ?? METHODS.length - 1;
    const k = m * CLASSES.length + classIndex(res.statusCode);
    tally[k] = tally[k]! + 1;
    const seconds = (performance.now() - t0) / 1000;
    let b = 0;
    while (b < BUCKETS.length && seconds > BUCKETS[b]!) b++;
    latencyCounts[b] = latencyCounts[b]! + 1;
    latencySum += seconds;
  }
  function finished(this: Timed): void {
    count(this, this.airlockT0!);
  }
  const closed = function (this: Socket): void {
    open.delete(this);
    closedBytes += this.bytesWritten ?? 0;
  };
  let current: string | null = null;
  const now = o.now ?? Date.now;
  return {
    registry,
    contentType: registry.contentType,
    done(res, t0) {
      if (res.writableEnded) return count(res, t0);
      (res as Timed).airlockT0 = t0;
      res.on('finish', finished);
    },
    attach(server) {
      server.on('connection', (s: Socket) => {
        open.add(s);
        s.once('close', closed);
      });
    },
    serving(v) {
      if (current === v) return;
      if (current !== null) {
        version.remove(current);
        switches.inc();
        lastSwitch.set(now() / 1000);
      }
      current = v;
      version.set({ version: v }, 1);
    },
    importDone: (seconds, result) => imports.observe({ result }, seconds),
    mirrorDownload: (status) => mirror.inc({ status_class: classOf(status) }),
    refused: () => refusedC.inc(),
    text: () => registry.metrics(),
  };
}
