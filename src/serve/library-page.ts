import type { SiteSummary } from './library-sites.js';
import { plainText } from '../util/terminal.js';
import { BUSY } from './library-search.js';
import type { LibraryResults } from '../search/across.js';

/**
 * The library's landing page (pure): a search form over every site, the results of a search
 * grouped by site, and every site with its title, active version, import time and page count.
 * A plain form and links: no script, keyboard-usable as any page, nothing asked of another origin.
 */

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
/** Text from a site's pages with no control character or bidirectional override (each result is also isolated in <bdi>). */

/** A snippet is escaped text with matches in <mark> (the search engine's): only <mark> may stay markup, whatever an index file holds. */
const snippet = (html: string) =>
  html
    .split(/(<\/?mark>)/)
    .map((p) => (p === '<mark>' || p === '</mark>' ? p : p.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')))
    .join('');

function searchForm(sites: readonly SiteSummary[], found: LibraryResults | null, chosen: readonly string[]): string {
  const options = sites
    .filter((s) => s.version !== null && s.problem === null)
    .map((s) => `<option value="${esc(s.domain)}"${chosen.includes(s.domain) ? ' selected' : ''}>${esc(s.title)}</option>`);
  return `<form role="search" action="/" method="get" class="search">
<label for="q">Search the documentation</label>
<input id="q" name="q" type="search" maxlength="500" value="${esc(plainText(found?.query ?? ''))}" autocomplete="off">
<label for="site" class="visually-hidden">In</label><select id="site" name="site"><option value="">all sites</option>${options.join('')}</select>
<button type="submit">Search</button></form>`;
}

function results(found: LibraryResults): string {
  const count = found.sites.reduce((n, s) => n + s.hits.length, 0);
  const head = `<h2 id="results">${count === 0 ? 'No results' : `${count} ${count === 1 ? 'result' : 'results'}`} for “<bdi>${esc(plainText(found.query))}</bdi>”${found.sites.length > 1 ? ` in ${found.sites.length} sites` : ''}</h2>`;
  const groups = found.sites.map((s) => {
    const hits = s.hits.map((h) => {
      const title = h.metadata.heading && h.metadata.heading !== h.metadata.title ? `${h.metadata.title} — ${h.metadata.heading}` : h.metadata.title;
      const text = h.content === '' ? '' : `<p class="snippet"><bdi>${snippet(plainText(h.content))}</bdi></p>`; // the best sites' hits only
      return `<li><a href="${esc(h.path)}"><bdi>${esc(plainText(title) || h.path)}</bdi></a>${text}</li>`;
    });
    return `<section class="site-hits" aria-label="${esc(s.title)}"><h3><a href="${esc(s.path)}"><bdi>${esc(s.title)}</bdi></a> <span class="domain">${esc(s.domain)}</span></h3><ol>${hits.join('')}</ol></section>`;
  });
  const notes = [
    found.pending.length ? `<p class="note">Still preparing the search index of ${found.pending.map(esc).join(', ')}: search again in a moment.</p>` : '',
    ...found.unavailable.map((u) => `<p class="note">Not searched: <bdi>${esc(plainText(u.domain))}</bdi> (${esc(plainText(u.why))}).</p>`),
  ];
  return `<section aria-labelledby="results">${head}\n${groups.join('\n')}${notes.join('')}</section>`;
}

/** `busy`: a search that could not run now (too many at once): the form keeps its query, the page says to search again. */
export function landingPage(sites: readonly SiteSummary[], found: LibraryResults | null = null, chosen: readonly string[] = [], busy?: string): string {
  const rows = sites.map((s) => {
    const when = s.importedAt === null ? '' : s.importedAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
    const facts = [
      s.version === null ? 'no active version' : `version ${esc(s.version)}`,
      s.pages === null ? null : `${s.pages} ${s.pages === 1 ? 'page' : 'pages'}`,
      when === '' ? null : `imported ${esc(when)}`,
    ].filter((x) => x !== null);
    const title = s.version === null ? `<bdi>${esc(s.title)}</bdi>` : `<a href="${esc(s.path)}"><bdi>${esc(s.title)}</bdi></a>`;
    const problem = s.problem === null ? '' : `<p class="problem">${esc(s.problem)}</p>`;
    return `<li>${title} <span class="domain">${esc(s.domain)}</span><p class="facts">${facts.join(' · ')}</p>${problem}</li>`;
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${found ? `${esc(plainText(found.query))} – ` : ''}Documentation library</title><link rel="stylesheet" href="/_airlock/library.css"></head>
<body><main><h1>Documentation library</h1>
${searchForm(sites, found ?? (busy === undefined ? null : { query: busy, sites: [], pending: [], unavailable: [] }), chosen)}
${found ? results(found) : busy === undefined ? '' : `<p class="note" role="status">${esc(BUSY)}.</p>`}
<h2>Sites</h2>
<p>${sites.length} ${sites.length === 1 ? 'site' : 'sites'} on this server.</p>
${rows.length === 0 ? '<p>The library holds no site yet.</p>' : `<ul class="sites">\n${rows.join('\n')}\n</ul>`}
</main></body></html>
`;
}

export const LANDING_CSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}
main{max-width:48rem;margin:2rem auto;padding:0 1rem}
.search{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:1rem 0}
.search label[for=q]{flex-basis:100%;font-weight:600}
.search input{flex:1;min-width:12rem;font:inherit;padding:.4rem}
.search select,.search button{font:inherit;padding:.4rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
:focus-visible{outline:3px solid #1a73e8;outline-offset:2px}
.site-hits ol{padding-left:1.25rem}
.snippet{margin:.15rem 0 .6rem;color:#444}
mark{background:#fde68a;color:inherit}
.note{color:#555}
.sites{list-style:none;padding:0}
.sites li{border-bottom:1px solid #ddd;padding:.75rem 0}
.sites a{font-size:1.15rem;font-weight:600}
.domain{color:#555;margin-left:.5rem}
.facts{margin:.25rem 0 0;color:#444}
.problem{margin:.25rem 0 0;color:#a00}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}.domain,.facts,.snippet,.note{color:#bbb}.sites li{border-color:#333}a{color:#8ab4f8}mark{background:#665c00}}
`;
