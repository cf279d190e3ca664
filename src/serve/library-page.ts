import type { SiteSummary } from './library-sites.js';

/** The library's landing page (pure): every site with its title, active version, import time and page count. */

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

export function landingPage(sites: readonly SiteSummary[]): string {
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
<title>Documentation library</title><link rel="stylesheet" href="/_airlock/library.css"></head>
<body><main><h1>Documentation library</h1>
<p>${sites.length} ${sites.length === 1 ? 'site' : 'sites'} on this server.</p>
${rows.length === 0 ? '<p>The library holds no site yet.</p>' : `<ul class="sites">\n${rows.join('\n')}\n</ul>`}
</main></body></html>
`;
}

export const LANDING_CSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}
main{max-width:48rem;margin:2rem auto;padding:0 1rem}
.sites{list-style:none;padding:0}
.sites li{border-bottom:1px solid #ddd;padding:.75rem 0}
.sites a{font-size:1.15rem;font-weight:600}
.domain{color:#555;margin-left:.5rem}
.facts{margin:.25rem 0 0;color:#444}
.problem{margin:.25rem 0 0;color:#a00}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}.domain,.facts{color:#bbb}.sites li{border-color:#333}a{color:#8ab4f8}}
`;
