import type { Server } from 'node:http';
import type { AirlockServerOptions } from './server-types.js';
import type { ServeMetrics } from './metrics-types.js';

/** What `createLibraryServer` (library.ts) takes and gives. */

export interface LibraryServerOptions {
  library: string;
  /** The options of one site's server (features, CSP, search: each site its own), made when it is opened. */
  siteOptions: (domain: string) => Omit<AirlockServerOptions, 'store'> | Promise<Omit<AirlockServerOptions, 'store'>>;
  /** Host names mapped to a site's domain (`docs.vendor.example` → `vendor-docs.intranet`). */
  hosts?: ReadonlyMap<string, string>;
  /** The version a site is pinned to (its siteOptions' `version`), shown on the landing page instead of its active one. */
  pinned?: (domain: string) => string | undefined;
  log?: (line: string) => void;
  /** Sites whose bundles are still to be tried: `/_airlock/ready` answers 503 naming them (default none). */
  preparing?: () => readonly string[];
  /** More for `/_airlock/ready` to say, whatever it answers (a follower's sites whose mirror is unreachable or whose version was refused). */
  readyNotes?: () => Record<string, unknown> | null;
  /** Sites configured but with no folder yet, and why (their bundle is being fetched, or failed): answered 503 and listed, not 404. */
  absent?: ReadonlyMap<string, string>;
  /** `GET /_airlock/metrics` (createMetrics bySite): the library's own requests as site="_library"; each site counts into its `site(domain)` view, passed in its siteOptions. */
  metrics?: ServeMetrics;
  pollMs?: number;
  /** A site not asked for in this long is closed (its index, watch, lease and search freed), opened again by its next request (default 10 min). */
  idleMs?: number;
  /** Milliseconds since the epoch (default Date.now): the idle clock; tests move it. */
  clock?: () => number;
}

export interface LibraryServer {
  server: Server;
  listen(port?: number, host?: string): Promise<string>;
  close(graceMs?: number): Promise<void>;
  /** Read the library folder again now (sites added or removed) and re-read every open site's active pointer. */
  recheck(): Promise<void>;
  /** The sites opened so far (tests, metrics). */
  opened(): string[];
  /**
   * A site kept open for a follower of a mirror (serve --library --follow), never closed as idle:
   * the calls a rollout makes on it (src/fleet FollowTarget), each on the site as it is opened now.
   */
  follow(domain: string): SiteTarget;
}

/** One site of a library as a rollout drives it (the shape of src/fleet's FollowTarget). */
export interface SiteTarget {
  current(): string | null;
  preload(label: string): Promise<void>;
  recheck(): Promise<void>;
  adopt(label: string): boolean;
  adopted(): void;
}
