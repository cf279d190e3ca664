import { createServer, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { siteName } from '../store/library.js';
import { LibraryFolder } from './library-folder.js';
import { hostFields, hostMap, HostNames, shadowed } from './library-hosts.js';
import { refuseConnect } from '../util/http-connect.js';
import { gracefulClose, listenOn } from '../util/http-listen.js';
import { escapeControls } from '../util/terminal.js';
import { openSite, type OpenSite } from './server.js';
import { keepPrefix, LibraryResponse, redirect, text } from './library-respond.js';
import type { LibraryServer, LibraryServerOptions } from './library-types.js';
import { ownPages } from './library-own.js';
import { asServed, SiteSummaries, type SiteSummary } from './library-sites.js';
import { forReaders } from './respond.js';
import { asSearchable, LibrarySearch } from './library-search.js';

/**
 * `airlock serve --library LIB`: every site of a library from one listener. A request goes to the site
 * its Host names (the domain, or a name mapped to it), else to the site its first path segment names
 * (`/<domain>/…`, the prefix taken off), else to the library's own pages: the landing page at `/`,
 * `/_airlock/library` (JSON). A request for an unknown host never reaches another site's pages.
 *
 * Sites are opened on their first request (an idle site costs a folder name), each on its own:
 * its versions, pointer watch, lease and caches are its own, so a switch, a repair or a damaged
 * store of one never delays another. The library folder is read again every `pollMs` (and on
 * SIGHUP): a site added is served, a site removed is closed.
 */
export type { LibraryServer, LibraryServerOptions } from './library-types.js';

const RETRY_MS = 5000; // a site that failed to open is opened again by a request after this long

/** Why an open site can no longer be served: its version is another domain's package (put into its store by hand), or its files are gone. */
function unservable(s: OpenSite, domain: string): string | null {
  const held = s.versions.current.domain;
  if (held !== '' && held !== domain && siteName(held) !== domain)
    return `the version it serves (${s.versions.current.version}) is a package of ${escapeControls(held)}`;
  return s.versions.broken;
}

export async function createLibraryServer(o: LibraryServerOptions): Promise<LibraryServer> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const clock = o.clock ?? Date.now;
  const summaries = new SiteSummaries(clock, (d) => o.pinned?.(d) ?? (live.get(d)?.versions.refused ? live.get(d)?.versions.current.version : undefined));
  const folder = new LibraryFolder(o.library, log);
  await folder.open();
  const [open, lastUsed] = [new Map<string, Promise<OpenSite>>(), new Map<string, number>()];
  const [held, live] = [new Set<string>(), new Map<string, OpenSite>()]; // followed sites (never closed as idle); the sites open now (a follower's calls)
  const served = (s: SiteSummary) => asServed(s, live.get(s.domain)?.versions, o.library); // a switch an open site refused: what it serves
  const idleMs = o.idleMs ?? 600_000;
  const failed = new Map<string, { at: number; message: string }>();
  const hosts = hostMap(o.hosts, new Set([...folder.known, ...(o.preparing?.() ?? [])]), log); // a site whose bundle is coming is no surprise
  const [shadowSaid, hostNames, scanMs] = [new Set<string>(), new HostNames(), o.pollMs ?? 2000];

  function site(domain: string): Promise<OpenSite> {
    let p = open.get(domain);
    if (p === undefined) {
      const replaced = () => {
        log(`airlock serve: site ${domain}: its folder was replaced by another store; it is opened again`);
        closeSite(domain);
      };
      p = Promise.resolve(o.siteOptions(domain))
        .then((opts) => openSite({ ...opts, store: join(o.library, domain), onReplaced: replaced, guardMs: null }))
        .then(async (s) => {
          const why = unservable(s, domain);
          if (why !== null) await s.close().then(() => Promise.reject(new Error(why))); // nothing of it prepared
          return s;
        });
      open.set(domain, p);
      p.then(
        (s) => {
          live.set(domain, s);
          failed.delete(domain);
          s.versions.current.preparing?.release(); // opened by a request: the server is listening
          log(`airlock serve: opened site ${domain}`);
        },
        (err: unknown) => {
          open.delete(domain); // tried again by a later request
          fail(domain, err instanceof Error ? err.message : String(err));
        },
      );
    }
    return p;
  }

  async function rescan(): Promise<void> {
    for (const d of await folder.read()) {
      log(`airlock serve: site ${d} was removed from the library`);
      closeSite(d);
    }
    shadowed(hosts, folder.known, shadowSaid, log);
    for (const [d, at] of lastUsed)
      if (clock() - at > idleMs && !held.has(d)) closeSite(d);
      else if (clock() - at <= scanMs) void live.get(d)?.versions.guard(); // in use: its folders looked at (folder-guard.ts)
  }

  /** A site that cannot be served: said once per reason, answered 503 with it, opened again by a request after RETRY_MS. */
  function fail(domain: string, message: string): void {
    const shown = forReaders(o.library, message);
    if (failed.get(domain)?.message !== shown) log(`airlock serve: site ${domain} cannot be served: ${message}`);
    failed.set(domain, { at: clock(), message: shown });
  }

  function closeSite(domain: string): void {
    const p = open.get(domain);
    open.delete(domain);
    live.delete(domain);
    lastUsed.delete(domain);
    void p?.then((s) => s.close()).catch(() => {});
  }

  /** The open site; a rejection when it cannot be served (switched to another domain's package, or its files gone: closed, said). */
  async function servable(domain: string): Promise<OpenSite> {
    lastUsed.set(domain, clock());
    const s = await site(domain);
    const why = unservable(s, domain);
    if (why === null) return s;
    closeSite(domain);
    fail(domain, why);
    throw new Error(why);
  }

  const search = new LibrarySearch(
    async () => asSearchable((await summaries.list(o.library)).sites, (d) => failed.get(d)?.message), // a refused switch: its served version searched
    async (domain) => (await servable(domain).catch((err: Error) => Promise.reject(new Error(forReaders(o.library, err.message))))).search,
  );
  const has = (d: string) => folder.known.has(d) || o.absent?.has(d) === true; // a configured site not there yet: 503, not 404
  const handler = (req: IncomingMessage, res: LibraryResponse): void => {
    if (hostFields(req.rawHeaders) > 1) return text(res, 400, 'Bad Request: more than one Host header\n', []); // which site is meant is ambiguous (RFC 9112 §3.2)
    const byHost = hostNames.of(req.headers.host);
    const named = byHost === null ? null : (hosts.get(byHost) ?? byHost);
    if (named !== null && has(named)) return toSite(named, req, res, null);
    const url = req.url ?? '/';
    const first = /^\/([^/?#]+)(?=[/?#]|$)/.exec(url)?.[1];
    const prefixed = first === undefined ? null : siteName(first);
    if (prefixed !== null && has(prefixed) && prefixed === first) {
      const rest = url.slice(first!.length + 1);
      if (rest === '' || rest.startsWith('?')) return redirect(res, `/${first}/${rest}`);
      req.url = rest;
      return toSite(prefixed, req, res, `/${first}`);
    }
    o.metrics?.done(res, performance.now()); // counted as site="_library" once it has ended
    void ownRoute(req, res, url);
  };

  /** An open site that can be served is handed the request at once (no promise made, as a site served alone); another is opened first. */
  function toSite(domain: string, req: IncomingMessage, res: LibraryResponse, prefix: string | null): void {
    const ready = open.has(domain) ? live.get(domain) : undefined;
    if (ready === undefined || unservable(ready, domain) !== null) return void opening(domain, req, res, prefix);
    lastUsed.set(domain, clock());
    if (prefix !== null) keepPrefix(res, prefix);
    ready.handler(req, res);
  }

  /** A site not open yet, or that cannot be served: opened, then handed the request, or 503. */
  async function opening(domain: string, req: IncomingMessage, res: LibraryResponse, prefix: string | null): Promise<void> {
    const why = () => [o.absent?.get(domain), failed.get(domain)?.message].filter((w) => w !== undefined).join('; ') || 'it failed to open';
    const unavailable = () => text(res, 503, `site ${domain} cannot be served: ${why()}\n`, ['Retry-After', '5']);
    // A site that failed to open is tried again after 5 s, not at every request (a reader cannot make the server reload it in a loop).
    if (!folder.known.has(domain) || (!open.has(domain) && clock() - (failed.get(domain)?.at ?? -Infinity) < RETRY_MS)) return unavailable();
    const s = await servable(domain).catch(() => null);
    if (s === null) return unavailable();
    if (prefix !== null) keepPrefix(res, prefix);
    s.handler(req, res);
  }

  const ownRoute = ownPages({ ...o, folder, summaries, failed, search, served }); // its library, metrics, preparing, readyNotes, absent

  const server = createServer({ keepAliveTimeout: 5000, ServerResponse: LibraryResponse }, handler);
  refuseConnect(server);
  o.metrics?.attach(server);
  const stop = gracefulClose(server);
  const timer = setInterval(() => void rescan().catch(() => {}), scanMs).unref();

  return {
    server,
    opened: () => [...open.keys()],
    follow: (domain) => {
      held.add(domain);
      const versions = async () => (await servable(domain)).versions;
      return {
        current: () => live.get(domain)?.versions.current.version ?? null,
        preload: async (l) => (await versions()).preload(l),
        recheck: async () => (await versions().catch(() => null))?.recheck(),
        adopt: (l) => live.get(domain)?.versions.adopt(l) ?? false,
        adopted: () => live.get(domain)?.versions.adopted(),
      };
    },
    recheck: async () => {
      await rescan();
      await Promise.all([...open.values()].map((p) => p.then((s) => s.versions.recheck()).catch(() => {})));
    },
    listen: (port = 0, host = '127.0.0.1') => listenOn(server, port, host),
    close: async (graceMs = 10_000) => {
      clearInterval(timer);
      await stop(graceMs);
      await Promise.all([...open.values()].map((p) => p.then((s) => s.close()).catch(() => {})));
      open.clear();
    },
  };
}
