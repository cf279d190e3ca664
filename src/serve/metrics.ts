import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * `GET /_airlock/metrics` (serve --metrics): Prometheus text format from prom-client, on a private
 * registry. Per request only a 'finish' listener, one clock read and three increments on
 * pre-resolved label children; no label ever holds a path (unbounded cardinality, and a path is
 * attacker-chosen). Everything else (version, switches, imports, mirror downloads) is updated when
 * it happens, off the request path. With --workers N each worker answers for itself.
 */
export interface ServeMetrics {
  registry: Registry;
  /** Attach to one request (the handler calls this first). */
  observe(req: IncomingMessage, res: ServerResponse): void;
  /** The version now served; counts a switch when it differs from the previous one. */
  serving(version: string): void;
  importDone(seconds: number, result: 'ok' | 'failed'): void;
  mirrorDownload(status: number): void;
  /** Versions a follower refused (verification failed): the fleet's report. */
  refused(version: string): void;
  text(): Promise<string>;
  contentType: string;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
const classOf = (status: number) => (status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other');

interface Timed extends ServerResponse { airlockT0?: number; airlockReq?: IncomingMessage }

/** defaultMetrics: also the process metrics (CPU, memory, event-loop lag, GC): off by default, their GC and event-loop observers cost throughput. */
export function createMetrics(o: { defaultMetrics?: boolean; now?: () => number } = {}): ServeMetrics {
  const registry = new Registry();
  if (o.defaultMetrics === true) collectDefaultMetrics({ register: registry, prefix: 'airlock_process_' });
  const requests = new Counter({ name: 'airlock_http_requests_total', help: 'HTTP requests answered, by method and status class', labelNames: ['method', 'status_class'], registers: [registry] });
  const latency = new Histogram({ name: 'airlock_http_request_duration_seconds', help: 'Time from request to the last byte handed to the kernel', registers: [registry],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] });
  const bytes = new Counter({ name: 'airlock_http_response_bytes_total', help: 'Bytes written to clients (headers and bodies)', registers: [registry] });
  const version = new Gauge({ name: 'airlock_served_version_info', help: 'The version this process serves (value 1)', labelNames: ['version'], registers: [registry] });
  const switches = new Counter({ name: 'airlock_version_switches_total', help: 'Switches of the served version since start', registers: [registry] });
  const lastSwitch = new Gauge({ name: 'airlock_last_switch_timestamp_seconds', help: 'Unix time of the last switch (0: none yet)', registers: [registry] });
  const imports = new Histogram({ name: 'airlock_import_duration_seconds', help: 'Download, verification and import of a version by this process', labelNames: ['result'], registers: [registry],
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900] });
  const mirror = new Counter({ name: 'airlock_mirror_downloads_total', help: 'Package downloads answered by the mirror, by status class', labelNames: ['status_class'], registers: [registry] });
  const refusedC = new Counter({ name: 'airlock_follow_refused_versions_total', help: 'Versions a follower refused (verification failed): never switched to', registers: [registry] });
  lastSwitch.set(0);

  const children = new Map<string, Counter.Internal>();
  const child = (method: string, status: number) => {
    const key = method + status;
    let c = children.get(key);
    if (c === undefined) {
      c = requests.labels(METHODS.has(method) ? method : 'other', classOf(status));
      if (children.size < 1024) children.set(key, c);
    }
    return c;
  };
  function finished(this: Timed): void {
    const req = this.airlockReq!;
    child(req.method ?? 'other', this.statusCode).inc();
    latency.observe((performance.now() - this.airlockT0!) / 1000);
    const sock = req.socket as typeof req.socket & { airlockSent?: number };
    const sent = sock.bytesWritten;
    bytes.inc(sent - (sock.airlockSent ?? 0));
    sock.airlockSent = sent;
  }
  let current: string | null = null;
  const now = o.now ?? Date.now;
  return {
    registry,
    contentType: registry.contentType,
    observe(req, res) {
      const t = res as Timed;
      t.airlockT0 = performance.now();
      t.airlockReq = req;
      res.once('finish', finished);
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
