import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { z } from 'zod';
import type { SiteSummary } from './library-sites.js';
import type { SearchAnswer } from '../search/service.js';
import type { QueryOptions } from '../search/engine.js';
import { searchSites, type CrossSearchOptions, type LibraryResults, type SearchableSite } from '../search/across.js';
import { describeZodError } from '../upstream/describe.js';
import { readJsonBody } from '../util/json-body.js';
import { turns } from '../util/turns.js';

/**
 * A library's search across its sites (the pure core is src/search/across.ts): the JSON route, the
 * landing page's form, and the turns they take.
 */

/** The library's listed sites as search sees them: one that cannot be served says why (it is named, not asked). */
export function asSearchable(sites: readonly SiteSummary[], failedWhy: (domain: string) => string | undefined): SearchableSite[] {
  return sites.map((s) => ({ ...s, problem: s.problem ?? failedWhy(s.domain) ?? (s.version === null ? 'no active version' : null) }));
}

export const LIBRARY_SEARCH_PATH = '/_airlock/library/search';
const MAX_BODY = 8 * 1024;

const Body = z.looseObject({
  query: z.string().trim().min(1).max(500),
  pageSize: z.number().int().min(1).max(20).nullish(),
  filter: z.looseObject({ site: z.union([z.string().max(253), z.array(z.string().max(253)).min(1).max(100)]).nullish() }).nullish(),
});

/**
 * `POST /_airlock/library/search` `{query, pageSize, filter: {site}}`: `pageSize` results per site
 * (default 5, at most 20); `filter.site`, a domain or a list of them, narrows the search to those
 * sites (a name that is no site of the library: 400 naming it). The body is bounded and must be
 * application/json, as for a site's own search.
 */
export function librarySearchRoute(
  sites: () => Promise<SearchableSite[]>,
  run: (among: readonly SearchableSite[], query: string, perSite: number) => Promise<LibraryResults | null>,
): Hono {
  const app = new Hono();
  // A client gone mid-body, the library folder unreadable: said in a word, no stack trace on stderr.
  app.onError((_err, c) =>
    // Said to any reader: the library's words, never its path on this server nor an operator's command.
    c.req.raw.signal.aborted
      ? c.body(null, 400)
      : c.json({ error: 'search is unavailable now: the library folder cannot be read' }, 503, { 'Retry-After': '5' }),
  );
  app.post(LIBRARY_SEARCH_PATH, async (c) => {
    const body = await readJsonBody(c.req.raw, MAX_BODY);
    if (!body.ok) return c.json({ error: body.error }, body.status);
    const v = Body.safeParse(body.value);
    if (!v.success) return c.json({ error: `invalid search request: ${describeZodError(v.error)}` }, 400);
    const all = await sites();
    const chosen = chosenSites(all, v.data.filter?.site ?? null);
    if (!chosen.ok) return c.json({ error: chosen.error }, 400);
    const found = await run(chosen.sites, v.data.query, v.data.pageSize ?? 5);
    if (found === null) return c.json({ error: BUSY }, 503, { 'Retry-After': '2' });
    return c.json(found);
  });
  app.all(LIBRARY_SEARCH_PATH, (c) => c.json({ error: 'use POST with a JSON body {query, pageSize, filter: {site}}' }, 405, { Allow: 'POST' }));
  return app;
}

/** The sites `filter.site` names (every site without it), or the first name that is no site of the library. */
export function chosenSites(all: SearchableSite[], filter: string | string[] | null): { ok: true; sites: SearchableSite[] } | { ok: false; error: string } {
  if (filter === null) return { ok: true, sites: all };
  const names = new Set((Array.isArray(filter) ? filter : [filter]).map((d) => d.toLowerCase().replace(/\.$/, '')));
  const unknown = [...names].find((d) => !all.some((s) => s.domain === d));
  if (unknown !== undefined) return { ok: false, error: `filter.site: no site ${JSON.stringify(unknown.slice(0, 100))} in this library` };
  return { ok: true, sites: all.filter((s) => names.has(s.domain)) };
}

/** The landing page's search (`/?q=…&site=…`, a plain form: no script needed): the query and the sites it names, or null. */
export function searchAsked(url: string): { query: string; sites: string[] } | null {
  const params = new URLSearchParams(url.replace(/^[^?]*\??/, '').replace(/#.*$/, ''));
  const query = (params.get('q') ?? '').trim().slice(0, 500);
  if (query === '') return null;
  const sites = params
    .getAll('site')
    .slice(0, 100)
    .map((d) => d.trim().toLowerCase().replace(/\.$/, ''));
  return { query, sites: sites.filter((d) => d !== '') };
}

/** How long one search waits for sites' indexes being loaded or built. */
const DEADLINE_MS = 3000;
/**
 * Searches across sites run at once, and waiting: each asks many sites and may load their
 * indexes, so a burst of them (a reader's script, a crawler) is queued, then refused (503), never
 * run all at once.
 */
const RUNNING = 2;
const WAITING = 16;
export const BUSY = 'the server is answering other searches across sites; search again in a moment';

/** A library's search across its sites: the JSON route and the landing page's form, over one way of asking a site. */
export class LibrarySearch {
  readonly route: (req: IncomingMessage, res: ServerResponse) => void;
  private readonly o: Omit<CrossSearchOptions, 'perSite'>;
  private readonly inTurn = turns(RUNNING);

  /** `sites`: those that may be searched now; `searchOf`: a site's query (null: its search is off), rejected when it cannot be served. */
  constructor(
    private readonly sites: () => Promise<SearchableSite[]>,
    searchOf: (domain: string) => Promise<((query: string, options: QueryOptions) => Promise<SearchAnswer>) | null>,
  ) {
    this.o = {
      ask: async (domain, query, pageSize, full) => (await searchOf(domain))?.(query, { pageSize, scoresOnly: !full }) ?? null,
      deadlineMs: DEADLINE_MS,
      concurrency: 8,
    };
    this.route = getRequestListener(librarySearchRoute(sites, (among, query, perSite) => this.run(among, query, perSite)).fetch);
  }

  /** One search across `among`, in turn with the others (RUNNING at once, WAITING queued); null when too many wait already. */
  async run(among: readonly SearchableSite[], query: string, perSite: number): Promise<LibraryResults | null> {
    if (this.inTurn.waiting >= WAITING) return null;
    return this.inTurn(() => searchSites(among, query, { ...this.o, perSite }));
  }

  /** The landing page's search (`/?q=…&site=…`): its results and the sites chosen, or null when the page asks none. */
  async page(url: string): Promise<{ results: LibraryResults | null; query: string; sites: string[] } | null> {
    const ask = searchAsked(url);
    if (ask === null) return null;
    const all = await this.sites();
    const among = all.filter((s) => ask.sites.length === 0 || ask.sites.includes(s.domain));
    const results = await this.run(among, ask.query, 5);
    // A site the form names that is no site of the library is said, not silently left out.
    const unknown = ask.sites.filter((d) => !all.some((s) => s.domain === d));
    results?.unavailable.push(...unknown.map((d) => ({ domain: d.slice(0, 253), why: 'no such site in this library' })));
    return { results, query: ask.query, sites: ask.sites };
  }
}
