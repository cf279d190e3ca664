import type { ServerResponse } from 'node:http';
import type { Server as NetServer } from 'node:net';
import type { Registry } from 'prom-client';

/** What `createMetrics` (metrics.ts) gives: what the server, its versions and the fleet count. */
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
  /**
   * The same metrics, counting one site of a library (`bySite`): its requests and served version
   * carry `site="DOMAIN"`. At most MAX_SITE_LABELS sites are named; past that they count as
   * `site="other"` (bounded cardinality). Without `bySite`, the metrics themselves.
   */
  site(domain: string): ServeMetrics;
}
