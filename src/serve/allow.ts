import { escapeRegExp } from '../util/regexp.js';

/**
 * `405 Method Not Allowed` needs the methods a path does answer (RFC 9110 §15.5.6: `Allow`).
 * Hono answers a method mismatch with its 404, so the app asks this table instead (pure): the
 * registered routes' patterns (`/a/:id`, `/a/*`), method-less middleware (`ALL`) left out.
 */
export interface RouteLike {
  method: string;
  path: string;
}

function patternToRegExp(pattern: string): RegExp {
  const src = pattern
    .split('/')
    .map((seg) => {
      if (seg === '*') return '.*';
      if (seg.startsWith(':')) {
        const custom = /\{(.+)\}\??$/.exec(seg);
        return `(?:${custom ? custom[1] : '[^/]+'})${seg.endsWith('?') ? '?' : ''}`;
      }
      return escapeRegExp(seg);
    })
    .join('/');
  return new RegExp(`^${src}$`);
}

export function allowTable(routes: readonly RouteLike[]): (path: string) => string[] {
  const entries = routes.filter((r) => r.method !== 'ALL').map((r) => ({ method: r.method.toUpperCase(), re: patternToRegExp(r.path) }));
  return (path) => {
    const methods = new Set(entries.filter((e) => e.re.test(path)).map((e) => e.method));
    if (methods.has('GET')) methods.add('HEAD'); // hono answers HEAD with the GET route
    return [...methods].sort();
  };
}
