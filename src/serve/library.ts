import { createServer, type IncomingMessage } from 'node:http';
import { siteName } from '../store/library.js';
import { LibraryFolder } from './library-folder.js';
import { hostFields, hostMap, HostNames, shadowed } from './library-hosts.js';
import { refuseConnect } from '../util/http-connect.js';
import { gracefulClose, listenOn } from '../util/http-listen.js';
import { OpenSites, unservable } from './library-open.js';
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
 * Sites are opened on their first request (library-open.ts; an idle site costs a folder name),
 * each on its own: its versions, pointer watch, lease and caches are its own, so a switch, a
 * repair or a damaged store of one never delays another. The library folder is read again every `pollMs` (and on
 * SIGHUP): a site added is served, a site removed is closed.
 */
export type { LibraryServer, LibraryServerOptions } from './library-types.js';

const RETRY_MS = 5000; // a site that failed to open is opened again by a request after this long

export async function createLibraryServer(o: LibraryServerOptions): Promise<LibraryServer> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const clock = o.clock ?? Date.now;
  const folder = new LibraryFolder(o.library, log);
  await folder.open();
  const scanMs = o.pollMs ?? 2000;
  const sites = new OpenSites({ library: o.library, siteOptions: o.siteOptions, log, clock, idleMs: o.idleMs ?? 600_000, scanMs });
  const { live, failed } = sites;
  const summaries = new SiteSummaries(
    clock,
    (d) => o.pinned?.(d) ?? (live.get(d)?.site.versions.refused ? live.get(d)?.site.versions.current.version : undefined),
  );
  const served = (s: SiteSummary) => asServed(s, live.get(s.domain)?.site.versions, o.library); // a switch an open site refused: what it serves
  const hosts = hostMap(o.hosts, new Set([...folder.known, ...(o.preparing?.() ?? [])]), log); // a site whose bundle is coming is no surprise
  const [shadowSaid, hostNames] = [new Set<string>(), new HostNames()];

  async function rescan(): Promise<void> {
    for (const d of await folder.read()) {
      log(`airlock serve: site ${d} was removed from the library`);
      sites.close(d);
    }
    shadowed(hosts, folder.known, shadowSaid, log);
    sites.sweep();
  }

  const search = new LibrarySearch(
    async () => asSearchable((await summaries.list(o.library)).sites, (d) => failed.get(d)?.message), // a refused switch: its served version searched
    async (domain) => (await sites.servable(domain).catch((err: Error) => Promise.reject(new Error(forReaders(o.library, err.message))))).search,
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

  /** An open site in use that can be served is handed the request at once (no promise made, as a site served alone); another is opened or woken first. */
  function toSite(domain: string, req: IncomingMessage, res: LibraryResponse, prefix: string | null): void {
    const e = live.get(domain);
    if (e === undefined || e.idle || unservable(e.site, domain) !== null) return void opening(domain, req, res, prefix);
    e.used = clock();
    if (prefix !== null) keepPrefix(res, prefix);
    e.site.handler(req, res);
  }

  /** A site not open yet, idle, or that cannot be served: opened or woken, then handed the request, or 503. */
  async function opening(domain: string, req: IncomingMessage, res: LibraryResponse, prefix: string | null): Promise<void> {
    const why = () => [o.absent?.get(domain), failed.get(domain)?.message].filter((w) => w !== undefined).join('; ') || 'it failed to open';
    const unavailable = () => text(res, 503, `site ${domain} cannot be served: ${why()}\n`, ['Retry-After', '5']);
    // A site that failed to open is tried again after 5 s, not at every request (a reader cannot make the server reload it in a loop).
    if (!folder.known.has(domain) || (!live.has(domain) && clock() - (failed.get(domain)?.at ?? -Infinity) < RETRY_MS)) return unavailable();
    const s = await sites.servable(domain).catch(() => null);
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
    opened: () => sites.opened(),
    follow: (domain) => {
      sites.hold(domain);
      const versions = async () => (await sites.servable(domain)).versions;
      return {
        current: () => live.get(domain)?.site.versions.current.version ?? null,
        preload: async (l) => (await versions()).preload(l),
        recheck: async () => (await versions().catch(() => null))?.recheck(),
        adopt: (l) => live.get(domain)?.site.versions.adopt(l) ?? false,
        adopted: () => live.get(domain)?.site.versions.adopted(),
      };
    },
    recheck: async () => {
      await rescan();
      await sites.recheck();
    },
    listen: (port = 0, host = '127.0.0.1') => listenOn(server, port, host),
    close: async (graceMs = 10_000) => {
      clearInterval(timer);
      await stop(graceMs);
      await sites.closeAll();
    },
  };
}
