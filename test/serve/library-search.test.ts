import { describe, expect, it } from 'vitest';
import { asSearchable, BUSY, chosenSites, LIBRARY_SEARCH_PATH, LibrarySearch, librarySearchRoute, searchAsked } from '../../src/serve/library-search.js';
import { searchSites, SHOWN, type SearchableSite } from '../../src/search/across.js';
import { until } from '../helpers/wait.js';
import { landingPage } from '../../src/serve/library-page.js';
import type { SearchAnswer } from '../../src/search/service.js';
import type { SearchHit } from '../../src/search/engine.js';

/** Search across a library's sites (pure core): an injected clock and wait, sites answering as told. */
const sites: SearchableSite[] = ['a.example', 'b.example', 'c.example', 'd.example'].map((d) => ({ domain: d, title: d.toUpperCase(), path: `/${d}/` }));
const hit = (path: string, score: number): SearchHit => ({
  content: `<mark>q</mark> ${path}`,
  path,
  metadata: { title: path, heading: '', anchor: null, page: path, score },
});

function clock() {
  let t = 0;
  return { now: () => t, wait: async (ms: number) => void (t += ms) };
}

describe('search across sites', () => {
  it('groups hits by site under its path, the site with the best match first; sites with no hit are left out', async () => {
    const answers: Record<string, SearchAnswer | null> = {
      'a.example': { status: 'ready', hits: [hit('/x', 2)] },
      'b.example': { status: 'ready', hits: [hit('/y#h', 9), hit('/z', 1)] },
      'c.example': { status: 'ready', hits: [] },
      'd.example': null,
    };
    const r = await searchSites(sites, 'q', { ask: async (d) => answers[d]!, perSite: 5, deadlineMs: 1000, ...clock() });
    expect(r.sites.map((s) => s.domain)).toEqual(['b.example', 'a.example']);
    expect(r.sites[0]!.hits.map((h) => h.path)).toEqual(['/b.example/y#h', '/b.example/z']);
    expect(r.sites[0]!.title).toBe('B.EXAMPLE');
    expect(r.unavailable).toEqual([{ domain: 'd.example', why: 'local search is off for this site' }]);
    expect(r.pending).toEqual([]);
  });

  it("echoes the caller's query as a reader sees it: no control or bidirectional formatting character", async () => {
    const r = await searchSites(sites, 'quokka \u202e\u200f\u0000\u001b[31m', { ask: async () => null, perSite: 5, deadlineMs: 1000, ...clock() });
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    expect(r.query).not.toMatch(/[\u0000-\u001f\u200f\u202e]/);
    expect(r.query).toContain('quokka');
  });

  it('waits for an index being built until the deadline, then lists the site as pending; a site that cannot be served or whose search failed is named with why', async () => {
    let asked = 0;
    const c = clock();
    const r = await searchSites(sites, 'q', {
      ask: async (d, _q, _n, full) => {
        if (d === 'a.example' && full) return { status: 'ready', hits: [hit('/x', 1)] }; // its snippets
        if (d === 'a.example') return ++asked < 3 ? { status: 'building', retryAfterSec: 2 } : { status: 'ready', hits: [hit('/x', 1)] };
        if (d === 'b.example') return { status: 'building', retryAfterSec: 2 };
        if (d === 'c.example') throw new Error('its files are gone');
        return { status: 'failed', error: 'index too large', retryAfterSec: 30 };
      },
      perSite: 5,
      deadlineMs: 1000,
      concurrency: 4,
      ...c,
    });
    expect(asked).toBe(3);
    expect(r.sites.map((s) => s.domain)).toEqual(['a.example']);
    expect(r.pending).toEqual(['b.example']);
    expect(r.unavailable).toEqual([
      { domain: 'c.example', why: 'it cannot be served: its files are gone' },
      { domain: 'd.example', why: 'its search is unavailable: index too large' },
    ]);
    expect(c.now()).toBeLessThanOrEqual(1000);
  });

  it('every site is asked once before one still loading is asked again: their indexes load side by side, not one after another', async () => {
    const c = clock();
    const asked: string[] = [];
    const r = await searchSites(sites, 'q', {
      ask: async (d, _q, _n, full) => {
        if (full) return { status: 'ready', hits: [hit('/x', 1)] }; // the best sites' snippets
        asked.push(d);
        return asked.filter((x) => x === d).length < 2 ? { status: 'building', retryAfterSec: 2 } : { status: 'ready', hits: [hit('/x', 1)] };
      },
      perSite: 5,
      deadlineMs: 1000,
      concurrency: 1,
      ...c,
    });
    expect(asked).toEqual(['a.example', 'b.example', 'c.example', 'd.example', 'a.example', 'b.example', 'c.example', 'd.example']);
    expect(r.sites).toHaveLength(4);
    expect(r.pending).toEqual([]);
    expect(c.now()).toBe(200); // one pause between the two rounds
  });

  it('a site not reached by the deadline is pending, not asked', async () => {
    const c = clock();
    const asked: string[] = [];
    const r = await searchSites(sites, 'q', {
      ask: async (d, _q, _n, full) => {
        if (!full) asked.push(d);
        await c.wait(600);
        return { status: 'ready', hits: [hit('/x', 1)] };
      },
      perSite: 5,
      deadlineMs: 1000,
      concurrency: 1,
      ...c,
    });
    expect(asked).toEqual(['a.example', 'b.example']);
    expect(r.pending).toEqual(['c.example', 'd.example']);
  });

  it('every site is ranked without reading a page; only the SHOWN best sites are asked again for their snippets', async () => {
    const many: SearchableSite[] = Array.from({ length: SHOWN + 3 }, (_, i) => ({ domain: `s${i}.example`, title: `S${i}`, path: `/s${i}.example/` }));
    const asked: Array<[string, boolean]> = [];
    const r = await searchSites(many, 'q', {
      ask: async (d, _q, _n, full) => {
        asked.push([d, full]);
        const score = Number(d.slice(1, d.indexOf('.')));
        return { status: 'ready', hits: [{ ...hit('/x', score), content: full ? 'the <mark>q</mark> snippet' : '' }] };
      },
      perSite: 5,
      deadlineMs: 1000,
      ...clock(),
    });
    expect(asked.filter(([, full]) => !full)).toHaveLength(SHOWN + 3);
    expect(
      asked
        .filter(([, full]) => full)
        .map(([d]) => d)
        .sort(),
    ).toEqual(
      r.sites
        .slice(0, SHOWN)
        .map((s) => s.domain)
        .sort(),
    );
    expect(r.sites.map((s) => s.domain).slice(0, 2)).toEqual(['s12.example', 's11.example']); // best first
    expect(r.sites.slice(0, SHOWN).every((s) => s.hits[0]!.content !== '')).toBe(true);
    expect(r.sites.slice(SHOWN).every((s) => s.hits[0]!.content === '' && s.hits[0]!.path === `/${s.domain}/x`)).toBe(true);
  });

  it('filter.site narrows to the sites it names (case and a trailing dot aside); a name that is no site is refused naming it', () => {
    expect(chosenSites(sites, ['B.example.', 'c.example'])).toMatchObject({ ok: true, sites: [{ domain: 'b.example' }, { domain: 'c.example' }] });
    expect(chosenSites(sites, 'nope.example')).toEqual({ ok: false, error: 'filter.site: no site "nope.example" in this library' });
    expect(chosenSites(sites, null)).toMatchObject({ ok: true, sites });
  });

  it("the landing page's form: the query trimmed and bounded, empty sites dropped, no query no search", () => {
    expect(searchAsked('/?q=%20install%20&site=&site=A.example')).toEqual({ query: 'install', sites: ['a.example'] });
    expect(searchAsked('/?q=' + 'x'.repeat(600))!.query).toHaveLength(500);
    expect(searchAsked('/?q=%20')).toBeNull();
    expect(searchAsked('/')).toBeNull();
  });
});

describe('searches across sites in turn', () => {
  it('at most 2 run at once and 16 wait; the next is refused (null), and the queue moves on as each ends', async () => {
    const release: Array<() => void> = [];
    let running = 0;
    let most = 0;
    const search = new LibrarySearch(
      async () => sites.slice(0, 1),
      async () => async () => {
        running++;
        most = Math.max(most, running);
        await new Promise<void>((r) => release.push(r));
        running--;
        return { status: 'ready', hits: [] };
      },
    );
    const runs = Array.from({ length: 18 }, () => search.run(sites.slice(0, 1), 'q', 5));
    expect(await search.run(sites.slice(0, 1), 'q', 5)).toBeNull();
    for (let i = 0; i < 18; i++) {
      await until(() => release.length > 0, { timeoutMs: 5_000, intervalMs: 1 });
      release.shift()!();
    }
    const done = await Promise.all(runs);
    expect(done.every((r) => r !== null && r.sites.length === 0)).toBe(true);
    expect(most).toBe(2);
  });
});

describe('the landing page when searches are queued full', () => {
  it('keeps the query in the form and says to search again', () => {
    const page = landingPage([], null, [], 'turbine <b>');
    expect(page).toContain('value="turbine &lt;b&gt;"');
    expect(page).toContain(`<p class="note" role="status">${BUSY}.</p>`);
  });
});

describe('sites that cannot be searched, and a search that cannot run', () => {
  it('a listed site with no active version or a problem is named among unavailable, never left out', async () => {
    const listed = asSearchable(
      [
        { domain: 'a.example', path: '/a.example/', version: 'v1', title: 'A', pages: 1, importedAt: null, problem: null },
        { domain: 'b.example', path: '/b.example/', version: null, title: 'b.example', pages: null, importedAt: null, problem: null },
        { domain: 'c.example', path: '/c.example/', version: null, title: 'c.example', pages: null, importedAt: null, problem: 'state.json is damaged' },
      ],
      () => undefined,
    );
    const r = await searchSites(listed, 'q', { ask: async () => ({ status: 'ready', hits: [hit('/x', 1)] }), perSite: 5, deadlineMs: 1000, ...clock() });
    expect(r.sites.map((s) => s.domain)).toEqual(['a.example']);
    expect(r.unavailable).toEqual([
      { domain: 'b.example', why: 'it cannot be served: no active version' },
      { domain: 'c.example', why: 'it cannot be served: state.json is damaged' },
    ]);
  });

  it('the library unreadable while searching: 503 in words, no stack trace, never its path on the server nor an operator command', async () => {
    const app = librarySearchRoute(
      async () => {
        throw new Error('library /srv/lib does not exist or is not a folder; create it by importing a package (airlock import PKG --library /srv/lib)');
      },
      async () => null,
    );
    const r = await app.request(LIBRARY_SEARCH_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"x"}' });
    expect([r.status, r.headers.get('retry-after'), await r.json()]).toEqual([
      503,
      '5',
      { error: 'search is unavailable now: the library folder cannot be read' },
    ]);
  });

  it("a result's title and snippet carry no control character or bidirectional override, and are isolated", () => {
    const page = landingPage([], {
      query: 'q',
      sites: [
        {
          domain: 'a.example',
          title: 'A',
          path: '/a.example/',
          hits: [{ ...hit('/x', 1), content: 'x\u202eevil\u001b[2J', metadata: { ...hit('/x', 1).metadata, title: 'T\u202eitle' } }],
        },
      ],
      pending: [],
      unavailable: [],
    });
    expect(page.includes('\u202e') || page.includes('\u001b')).toBe(false);
    expect(page).toContain('<bdi>Title</bdi>');
  });
});
