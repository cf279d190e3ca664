/**
 * The URL forms of a version, computed once from the manifest's file list (pure).
 * The service's exports hold pages as `a/b.html` and folders as `a/index.html` while their links
 * say `/a/b`; the serving rules: `/a/b`, `/a/b.html` and `/a/b/` all reach the page, and any
 * redirect is a single 308. Precedence: an exact file, then the clean `.html` form, then a
 * folder's index; redirects only fill URL forms nothing else claims. A redirect target is always
 * a key that maps to a file, so there is never a chain or a loop, and a Location is always built
 * from a manifest path starting with a single '/', so it never leaves the site.
 */
export type Route<F> = { kind: 'file'; file: F } | { kind: 'redirect'; location: string };

/** Paths a site must never expose: dotfiles, odd segments, our reserved prefix. */
export function servablePath(p: string): boolean {
  if (p === '' || p.includes('\\') || p.includes('\0')) return false;
  const segs = p.split('/');
  if (segs[0] === '_airlock') return false;
  return segs.every((s) => s !== '' && s.charCodeAt(0) !== 46 /* '.' */);
}

/** Percent-encode a decoded path for a Location header (RFC 3986 pchar, '/' kept). */
export function encodePath(p: string): string {
  return p
    .split('/')
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()))
    .join('/');
}

export function buildRoutes<F extends { path: string }>(files: readonly F[], basePath: string | null = null): Map<string, Route<F>> {
  const routes = new Map<string, Route<F>>();
  const ok = files.filter((f) => servablePath(f.path));
  const put = (key: string, r: Route<F>) => {
    if (!routes.has(key)) routes.set(key, r);
  };
  for (const f of ok) put('/' + f.path, { kind: 'file', file: f });
  for (const f of ok) {
    if (f.path.endsWith('.html')) put('/' + f.path.slice(0, -5), { kind: 'file', file: f });
  }
  for (const f of ok) {
    if (f.path === 'index.html' || f.path.endsWith('/index.html')) put('/' + f.path.slice(0, -10), { kind: 'file', file: f });
  }
  // Redirects in order of precedence: /a -> /a/ and /a/b/ -> /a/b first, then /a/b.html -> /a/b/
  // for a folder page. So a folder literally named "b.html" (real exports hold redirect stubs at
  // docs/intro.html/index.html beside docs/intro/index.html) keeps /a/b.html, as a static host would.
  const slash: Array<[string, string]> = [];
  const dotHtml: Array<[string, string]> = [];
  for (const f of ok) {
    if (!f.path.endsWith('.html')) continue;
    if (f.path.endsWith('/index.html')) {
      const dir = '/' + f.path.slice(0, -10); // "/a/"
      slash.push([dir.slice(0, -1), dir]); // /a -> /a/
      dotHtml.push([dir.slice(0, -1) + '.html', dir]); // /a.html -> /a/
    } else if (f.path !== 'index.html') {
      const page = '/' + f.path.slice(0, -5); // "/a/b"
      slash.push([page + '/', page]); // /a/b/ -> /a/b
    }
  }
  for (const [from, to] of [...slash, ...dotHtml]) {
    if (routes.has(from)) continue;
    const target = routes.get(to);
    if (target?.kind === 'file') routes.set(from, { kind: 'redirect', location: encodePath(to) });
  }
  if (basePath !== null) addBasePath(routes, basePath);
  return routes;
}

/**
 * A site built for a sub-path (its pages link `/docs/guide` while the export holds `guide.html`)
 * is also served under that prefix: every URL form K gets `/docs` + K where nothing else claims
 * it, redirects keep the prefix, and `/docs` -> `/docs/`. An alias redirect whose target is not a
 * file is left out, so the "one 308 to a file" rule holds here too.
 */
export function addBasePath<F>(routes: Map<string, Route<F>>, base: string): void {
  const prefix = '/' + base;
  const encoded = encodePath(prefix);
  const aliases: Array<[string, Route<F>]> = [];
  for (const [key, r] of routes) {
    const k = prefix + key;
    if (routes.has(k)) continue;
    aliases.push([k, r.kind === 'file' ? r : { kind: 'redirect', location: encoded + r.location }]);
  }
  if (routes.get('/')?.kind === 'file') aliases.push([prefix, { kind: 'redirect', location: encoded + '/' }]);
  const added = new Map(aliases.filter(([k]) => !routes.has(k)));
  for (const [k, r] of added) routes.set(k, r);
  for (const [k, r] of added) {
    if (r.kind === 'redirect' && routes.get(decodeURIComponent(r.location))?.kind !== 'file') routes.delete(k);
  }
}
