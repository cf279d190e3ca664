import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { HOST_NAME } from '../package/label.js';

/** Which site a Host names (library.ts): the Host header as a site name, and the names mapped to sites. */

/**
 * A Host header (or a --site-host name) as a name to look up: lower case, no port, no trailing
 * dot; null when it is not a host name. A single label or an address is a name here (a network's
 * `docs` may be mapped to a site), never a site's own domain (siteName).
 */
export function hostName(host: string | undefined): string | null {
  if (host === undefined || host.startsWith('[')) return null;
  const h = host
    .replace(/:\d{1,5}$/, '')
    .toLowerCase()
    .replace(/\.$/, '');
  return HOST_NAME.test(h) ? h : null;
}

/**
 * The names mapped to sites (`--site-host NAME=DOMAIN`), checked against the library: a site's
 * own domain reaches that site, so mapping it to another is refused (one name, one site); a
 * mapping to a site not there yet is kept (it may be imported while serving), with a warning.
 */
export function hostMap(
  given: ReadonlyMap<string, string> | undefined,
  known: ReadonlySet<string>,
  library: string,
  log: (line: string) => void,
): Map<string, string> {
  const hosts = new Map<string, string>();
  for (const [name, domain] of given ?? []) {
    if (known.has(name) && domain !== name)
      throw new UsageError(
        `host name ${name} (mapped to ${domain}): ${name} is the domain of a site of the library (${join(library, name)}); one host name reaches one site`,
        {
          subject: '--site-host',
        },
      );
    if (!known.has(domain)) log(`airlock serve: warning: host name ${name} reaches ${domain}, which the library does not hold yet`);
    hosts.set(name, domain);
  }
  return hosts;
}

/** The site whose page (reached by its path prefix, on this same host) sent this request: its Referer's first segment. */
export function refererSite(referer: string | undefined, host: string | undefined, known: ReadonlySet<string>): string | null {
  if (referer === undefined) return null;
  try {
    const u = new URL(referer);
    if (u.host !== host) return null;
    const first = /^\/([^/]+)\//.exec(u.pathname)?.[1];
    return first !== undefined && known.has(first) ? first : null;
  } catch {
    return null;
  }
}
