import { UsageError } from '../errors.js';
import { escapeControls } from '../util/terminal.js';
import type { RootPages } from './site-address.js';

/** Root-relative `href`/`src` values ("/x/y", never "//host"). */
const URL_ATTR = /\s(?:href|src)\s*=\s*["']?(\/(?!\/)[^"'\s>]*)/gi;

/**
 * The sub-path a site was built for, from the links of its own pages (pure): a first segment B
 * such that `/B/rest` is not a URL of the export but `/rest` is, seen at least twice and more
 * often than links that work as they are or that fail either way. Docusaurus with a `baseUrl`,
 * Next.js with a `basePath`, MkDocs/Sphinx behind a prefix all export such sites (links
 * `/docs/guide`, files `guide.html`). null when the site links to itself at the root.
 */
export function detectBasePath(html: string, isUrl: (path: string) => boolean): string | null {
  let works = 0;
  const evidence = new Map<string, number>();
  const broken = new Map<string, number>();
  for (const m of html.matchAll(URL_ATTR)) {
    const path = decoded(m[1]!.replace(/[?#].*$/, ''));
    if (path === null) continue;
    if (isUrl(path)) {
      works++;
      continue;
    }
    const slash = path.indexOf('/', 1);
    const first = path.slice(1, slash === -1 ? undefined : slash);
    if (first === '' || first.startsWith('.') || first === '_airlock') continue;
    const rest = slash === -1 ? '/' : path.slice(slash);
    const tally = isUrl(rest) ? evidence : broken;
    tally.set(first, (tally.get(first) ?? 0) + 1);
  }
  let best: string | null = null;
  let most = 0;
  for (const [b, n] of evidence) {
    if (n > most) [best, most] = [b, n];
  }
  if (best === null || most < 2 || most < works || most <= (broken.get(best) ?? 0)) return null;
  return best;
}

function decoded(p: string): string | null {
  try {
    return decodeURIComponent(p);
  } catch {
    return null;
  }
}

/**
 * An explicit sub-path (`serve --base-path /project/`, values key `basePath`): the segments
 * without slashes (`project`, `org/project`), or null for `/` (the site is served at the root
 * only, and no sub-path is detected). Refused: dot segments, empty segments, backslashes, control
 * characters, the reserved `_airlock`, over 200 characters.
 */
export function parseBasePath(raw: string, name = '--base-path'): string | null {
  const t = raw.trim();
  const segs = t.split('/').filter((s) => s !== '');
  const bad =
    t.length > 200 ||
    !t.startsWith('/') ||
    // eslint-disable-next-line no-control-regex -- control characters are among what is refused
    /[\\\x00-\x1f\x7f?#%]/.test(t) ||
    /\/\//.test(t) ||
    segs.some((s) => s === '.' || s === '..' || s.startsWith('.') || s === '_airlock');
  if (bad) {
    const shown = raw.length > 200 ? `${JSON.stringify(raw.slice(0, 200))}… (${raw.length} characters)` : JSON.stringify(raw);
    throw new UsageError(
      `${name} ${escapeControls(shown)} is not a site path: give one like /project/, at most 200 characters, starting with /, without empty, . or .. segments, _airlock, backslashes, control characters, ? # or %; or / for the root`,
      { subject: name },
      'AIRLOCK_BAD_BASE_PATH',
    );
  }
  return segs.length === 0 ? null : segs.join('/');
}

/**
 * The sub-path a home page says it was published at (`<link rel=canonical
 * href="https://org.example.io/project/">`, or its sitemap's common folder: see site-address.ts),
 * when the export holds its pages at the root and nothing at that path (pure).
 */
export function homeBasePath(homePath: string | null, isUrl: (path: string) => boolean): string | null {
  if (homePath === null || !isUrl('/') || isUrl(homePath)) return null;
  const segs = decoded(homePath.slice(1, -1))?.split('/') ?? [];
  if (segs.length === 0 || segs.some((s) => s === '' || s.startsWith('.') || s === '_airlock' || s.includes('\\'))) return null;
  return segs.join('/');
}

/**
 * The site's sub-path from the start of its root pages (pure): from their links first, else from
 * where its home page says it was published.
 */
export function basePathOf(pages: RootPages, isUrl: (path: string) => boolean, homePath: string | null = null): string | null {
  return detectBasePath(pages.home + pages.notFound, isUrl) ?? homeBasePath(homePath, isUrl);
}
