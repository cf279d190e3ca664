import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LibraryFolder } from './library-folder.js';
import { refererSite } from './library-hosts.js';
import { landingPage, LANDING_CSS } from './library-page.js';
import { json, redirect, send, text } from './library-respond.js';
import { LIBRARY_SEARCH_PATH, type LibrarySearch } from './library-search.js';
import type { SiteSummaries, SiteSummary } from './library-sites.js';
import type { ServeMetrics } from './metrics-types.js';

/**
 * The library's own pages, for a request that names no site: the landing page at `/` (with its
 * search), `/_airlock/library` (JSON), the search API, health, readiness (200 once every site's
 * bundle was tried) and, with metrics, `/_airlock/metrics`.
 * A page of a site reached by path asking for one of its own root-relative URLs is sent back
 * under its prefix; any other path is 404.
 */
export interface OwnPagesOptions {
  library: string;
  folder: LibraryFolder;
  summaries: SiteSummaries;
  /** Sites that could not be opened, with why (listed with that problem). */
  failed: ReadonlyMap<string, { message: string }>;
  search: LibrarySearch;
  metrics?: ServeMetrics;
  /** Sites still being prepared (their bundles not yet tried): `/_airlock/ready` is 503 while any is. */
  preparing?: () => readonly string[];
  /** A listed site as readers should see it (what an open site serves, when it refused a switch). */
  served?: (s: SiteSummary) => SiteSummary;
  /** More for `/_airlock/ready` to say. */
  readyNotes?: () => Record<string, unknown> | null;
  /** Sites configured with no folder yet, and why: listed with that problem. */
  absent?: ReadonlyMap<string, string>;
}

const OWN = new Set(['/_airlock/health', '/_airlock/ready', '/_airlock/library', '/_airlock/library.css', '/_airlock/metrics', LIBRARY_SEARCH_PATH]);

export function ownPages(o: OwnPagesOptions): (req: IncomingMessage, res: ServerResponse, url: string) => Promise<void> {
  const { folder, summaries, failed, search, metrics } = o;
  return async (req, res, url) => {
    const path = url.replace(/[?#].*$/, '');
    // A page of a site reached by path, asking for one of its own root-relative URLs (`/guide`,
    // `/_airlock/search.js`): back under its prefix (a 308 keeps the method and the body).
    const from = refererSite(req.headers.referer, req.headers.host, folder.known);
    if (from !== null && path !== '/' && !OWN.has(path)) return redirect(res, `/${from}${url}`);
    if (path === LIBRARY_SEARCH_PATH) return void search.route(req, res);
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') return text(res, 405, 'Method Not Allowed\n', ['Allow', 'GET, HEAD']);
    if (path === '/_airlock/health')
      return json(res, { status: 'ok', sites: folder.known.size, ...(folder.unreadable ? { problem: 'the library folder cannot be read' } : {}) });
    if (path === '/_airlock/ready') {
      const pending = o.preparing?.() ?? [];
      const notes = o.readyNotes?.() ?? {};
      if (pending.length === 0 && !folder.unreadable) return json(res, { status: 'ready', sites: folder.known.size, ...notes });
      const why = folder.unreadable ? { problem: 'the library folder cannot be read' } : { preparing: pending };
      return send(res, 503, 'application/json; charset=utf-8', JSON.stringify({ status: 'not ready', ...why, ...notes }), ['Retry-After', '2']);
    }
    if (path === '/_airlock/library.css') return send(res, 200, 'text/css; charset=utf-8', LANDING_CSS, []);
    if (path === '/_airlock/metrics' && metrics) return send(res, 200, metrics.contentType, await metrics.text(), []);
    if (path === '/_airlock/library' || path === '/') {
      const listing = await summaries.list(o.library).catch(() => null);
      if (listing === null)
        return text(res, 503, `the library folder cannot be read; its ${folder.known.size} site(s) are served as they were\n`, ['Retry-After', '5']);
      const listed = listing.sites.map((l) => {
        const s = o.served?.(l) ?? l;
        const f = failed.get(s.domain);
        return f && s.problem === null ? { ...s, problem: f.message } : s;
      });
      const coming = [...(o.absent ?? [])]
        .filter(([d]) => !listed.some((s) => s.domain === d))
        .map(([domain, problem]) => ({ domain, path: `/${domain}/`, version: null, title: domain, pages: null, importedAt: null, problem }));
      const sites = [...listed, ...coming].sort((a, b) => (a.domain < b.domain ? -1 : 1));
      if (path === '/') {
        const found = await search.page(url);
        if (found !== null && found.results === null)
          return send(res, 503, 'text/html; charset=utf-8', landingPage(sites, null, found.sites, found.query), ['Retry-After', '2']);
        return send(res, 200, 'text/html; charset=utf-8', landingPage(sites, found?.results, found?.sites), []);
      }
      return json(res, { sites, skipped: listing.skipped.map((s) => s.name) });
    }
    return text(res, 404, `no site here: ${folder.known.size === 0 ? 'the library holds no site' : 'the library page is at /'}\n`, []);
  };
}
