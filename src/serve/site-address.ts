import { openRegularFileIfExists } from '../util/fsx.js';
import { ownOrigin } from '../features/html-own-links.js';
import type { VersionSource } from './source.js';

/**
 * Where a site was published, learned from the export itself: its own origins (the package's
 * domain, the URLs its home page gives for itself, its sitemap's) and the path its home page was
 * published at. Links to those origins are made same-origin in served pages, and a home page
 * published under a sub-path (`https://org.example.io/project/`) gets that sub-path served too.
 */
export interface SiteAddress {
  /** `https://docs.example.com`-style origins, sorted; at most MAX_ORIGINS. */
  origins: string[];
  /** The path the home page names for itself (`/project/`), or null when it gives none or `/`. */
  homePath: string | null;
}

/** How much of a page or sitemap is read (the head, and the first URLs of a sitemap). */
const READ_BYTES = 1024 * 1024;
const MAX_ORIGINS = 8;
const MAX_LOCS = 200;

const TAG = /<(link|meta|base)\b([^>]{0,2000})>/gi;
const ATTR = /([a-z:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;

function attrs(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const a of text.matchAll(ATTR)) {
    const name = a[1]!.toLowerCase();
    if (!m.has(name)) m.set(name, (a[2] ?? a[3] ?? a[4] ?? '').replace(/&amp;/g, '&'));
  }
  return m;
}

/** The absolute URLs a page gives for itself near its start: canonical link, og:url, <base href> (pure). */
export function selfUrls(html: string): string[] {
  const out: string[] = [];
  for (const t of html.matchAll(TAG)) {
    const a = attrs(t[2]!);
    const tag = t[1]!.toLowerCase();
    if (tag === 'link' && (a.get('rel') ?? '').toLowerCase().split(/\s+/).includes('canonical')) out.push(a.get('href') ?? '');
    else if (tag === 'meta' && (a.get('property') ?? a.get('name') ?? '').toLowerCase() === 'og:url') out.push(a.get('content') ?? '');
    else if (tag === 'base') out.push(a.get('href') ?? '');
  }
  return out.filter((u) => ownOrigin(u) !== null);
}

/** The first `<loc>` URLs of a sitemap (pure). */
export function sitemapUrls(xml: string): string[] {
  const out: string[] = [];
  for (const m of xml.matchAll(/<loc>\s*([^<\s]{1,2000})\s*<\/loc>/gi)) {
    if (out.length >= MAX_LOCS) break;
    const u = m[1]!.replace(/&amp;/g, '&');
    if (ownOrigin(u) !== null) out.push(u);
  }
  return out;
}

/** The folder every path shares (`/project/a`, `/project/b/` → `/project/`). */
function commonFolder(paths: string[]): string {
  if (paths.length === 0) return '/';
  let prefix = paths[0]!.slice(0, paths[0]!.lastIndexOf('/') + 1);
  for (const p of paths) while (!p.startsWith(prefix)) prefix = prefix.slice(0, prefix.slice(0, -1).lastIndexOf('/') + 1);
  return prefix;
}

/** From what the export says about itself (pure; exported for tests). */
export function learnAddress(domain: string, home: string, sitemap: string): SiteAddress {
  const origins = new Set<string>();
  if (/^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?(?::\d{1,5})?$/i.test(domain)) {
    for (const scheme of ['https', 'http']) {
      const o = ownOrigin(`${scheme}://${domain}/`);
      if (o !== null) origins.add(o);
    }
  }
  const self = selfUrls(home);
  const locs = sitemapUrls(sitemap);
  for (const u of [...self, ...locs]) {
    if (origins.size >= MAX_ORIGINS) break;
    origins.add(ownOrigin(u)!);
  }
  const path = self.length > 0 ? new URL(self[0]!).pathname : locs.length > 0 ? commonFolder(locs.map((u) => new URL(u).pathname)) : '/';
  const folder = path.slice(0, path.lastIndexOf('/') + 1);
  return { origins: [...origins].sort(), homePath: folder === '/' || folder === '' ? null : folder };
}

/**
 * The first MiB of a page of the version, or '' when it cannot be read as a regular file (these
 * are hints: a damaged store file is refused where it is served, not here).
 */
export async function readStart(file: string): Promise<string> {
  const opened = await openRegularFileIfExists(file, () => new Error('not a regular file')).catch(() => null);
  if (opened === null) return '';
  const { fh } = opened;
  try {
    const buf = Buffer.alloc(READ_BYTES);
    const { bytesRead } = await fh.read(buf, 0, READ_BYTES, 0).catch(() => ({ bytesRead: 0 }));
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** The start of the root pages a version says itself through ('' for each one it lacks). */
export interface RootPages {
  home: string;
  notFound: string;
  sitemap: string;
}

/** Read the start of index.html, 404.html and sitemap.xml once per version (bounded reads of files the manifest lists). */
export async function readRootPages(src: VersionSource): Promise<RootPages> {
  const names = new Set(src.files.map((f) => f.path));
  const dir = src.siteDir.replace(/\/?$/, '/');
  const read = (name: string) => (names.has(name) ? readStart(dir + name) : Promise.resolve(''));
  return { home: await read('index.html'), notFound: await read('404.html'), sitemap: await read('sitemap.xml') };
}

/** The site's own address, from its root pages (read here when not given). */
export async function siteAddress(src: VersionSource, pages?: RootPages): Promise<SiteAddress> {
  const { home, sitemap } = pages ?? (await readRootPages(src));
  return learnAddress(src.domain, home, sitemap);
}
