import type { SearchHit } from './engine.js';
import { plainText } from '../util/terminal.js';
import type { SearchAnswer } from './service.js';

/**
 * Search across many sites: one query asked of every site's own local index (each site's
 * index is its own, built from its served version), answered grouped by site, the site with the
 * best match first. Every site is asked, a few at a time; an index still being loaded or built is
 * asked again until the deadline, and a site not answered by then is listed as `pending` (search
 * again shortly), one whose search is off or failed as `unavailable`, with the reason. The SHOWN
 * best sites' hits carry their section and snippet; the others' are titles and links. Pure: the
 * asking, the clock and the waiting are given.
 */

/** A site that may be searched (from the library's listing). */
export interface SearchableSite {
  domain: string;
  title: string;
  /** Where the site is reached on this server (`/<domain>/`); its hits' paths are put under it. */
  path: string;
  /** Why it cannot be searched now (no active version, a damaged store): named among `unavailable`, not asked. */
  problem?: string | null;
}

export interface SiteHits extends SearchableSite {
  hits: SearchHit[];
}

export interface LibraryResults {
  query: string;
  sites: SiteHits[];
  pending: string[];
  unavailable: Array<{ domain: string; why: string }>;
}

export interface CrossSearchOptions {
  /** One site's query (`full`: with each hit's section and snippet, else ranked pages only): null when its local search is off; a rejection when it cannot be served. */
  ask: (domain: string, query: string, pageSize: number, full: boolean) => Promise<SearchAnswer | null>;
  /** Results per site. */
  perSite: number;
  /** How long a query waits for indexes being loaded or built. */
  deadlineMs: number;
  /** Sites asked at once. */
  concurrency?: number;
  now?: () => number;
  wait?: (ms: number) => Promise<void>;
}

/** Sites whose hits come with their sections and snippets (the best first). */
export const SHOWN = 10;

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function searchSites(sites: readonly SearchableSite[], query: string, o: CrossSearchOptions): Promise<LibraryResults> {
  const now = o.now ?? Date.now;
  const wait = o.wait ?? pause;
  const due = now() + o.deadlineMs;
  const out: LibraryResults = { query: plainText(query), sites: [], pending: [], unavailable: [] }; // the caller's words echoed as a reader sees them
  // One ask of a site: true when its index is still being loaded or built (asked again later).
  const one = async (site: SearchableSite): Promise<boolean> => {
    if (site.problem) {
      out.unavailable.push({ domain: site.domain, why: `it cannot be served: ${site.problem}` });
      return false;
    }
    const a = await o
      .ask(site.domain, query, o.perSite, false)
      .catch((err: unknown) => ({ status: 'down' as const, why: err instanceof Error ? err.message : String(err) }));
    if (a === null) out.unavailable.push({ domain: site.domain, why: 'local search is off for this site' });
    else if (a.status === 'down') out.unavailable.push({ domain: site.domain, why: `it cannot be served: ${a.why}` });
    else if (a.status === 'failed') out.unavailable.push({ domain: site.domain, why: `its search is unavailable: ${a.error}` });
    else if (a.status === 'ready') {
      const at = site.path.replace(/\/$/, '');
      if (a.hits.length) out.sites.push({ ...site, hits: a.hits.map((h) => ({ ...h, path: at + h.path })) });
    } else return true;
    return false;
  };
  // Every site is asked once (which starts the loading of each index not loaded), then those
  // still loading are asked again until the deadline: indexes load side by side, not one by one.
  for (let round = [...sites]; round.length > 0;) {
    const queue = [...round];
    const again: SearchableSite[] = [];
    const runner = async (): Promise<void> => {
      for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
        if (now() >= due) out.pending.push(s.domain);
        else if (await one(s)) again.push(s);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 4) }, runner));
    const left = due - now();
    if (again.length > 0 && left <= 0) out.pending.push(...again.map((s) => s.domain));
    if (again.length === 0 || left <= 0) break;
    await wait(Math.min(200, left));
    round = again;
  }
  const best = (s: SiteHits) => Math.max(...s.hits.map((h) => h.metadata.score));
  out.sites.sort((a, b) => best(b) - best(a) || a.domain.localeCompare(b.domain));
  // Every site was asked for its ranked pages only (no page read); the best SHOWN sites are asked
  // again for their sections and snippets (their indexes are loaded: quick). The others' hits stay
  // titles and links: a search over 500 sites reads 50 pages, not 2,500.
  await Promise.all(
    out.sites.slice(0, SHOWN).map(async (s, i) => {
      const a = await o.ask(s.domain, query, o.perSite, true).catch(() => null);
      const at = s.path.replace(/\/$/, '');
      if (a?.status === 'ready' && a.hits.length) out.sites[i] = { ...s, hits: a.hits.map((h) => ({ ...h, path: at + h.path })) };
    }),
  );
  out.pending.sort();
  out.unavailable.sort((a, b) => a.domain.localeCompare(b.domain));
  return out;
}
