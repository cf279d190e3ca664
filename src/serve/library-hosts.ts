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

/** How many Host fields a request has (its raw header list: no object of every header built per request). */
export function hostFields(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') n++;
  return n;
}

/** hostName of the Host headers seen, remembered (clients send the same few): at most MAX entries, then started afresh. */
export class HostNames {
  private static readonly MAX = 1024;
  private readonly seen = new Map<string, string | null>();
  of(host: string | undefined): string | null {
    if (host === undefined) return null;
    let n = this.seen.get(host);
    if (n === undefined) {
      n = hostName(host);
      if (this.seen.size >= HostNames.MAX) this.seen.clear();
      this.seen.set(host, n);
    }
    return n;
  }
}

/**
 * The names mapped to sites (`--site-host NAME=DOMAIN`, a values file's `hosts`): the operator's
 * mapping wins over a site whose domain is that name (a package for `vendor-docs.intranet`,
 * imported later, must not take a name the operator gave another site), so such a site is reached
 * by its path only, and `shadowed` says so once. A mapping to a site not there yet is kept (it may
 * be imported while serving), with a warning.
 */
export function hostMap(given: ReadonlyMap<string, string> | undefined, known: ReadonlySet<string>, log: (line: string) => void): Map<string, string> {
  const hosts = new Map(given ?? []);
  for (const [name, domain] of hosts)
    if (!known.has(domain)) log(`airlock serve: warning: host name ${name} reaches ${domain}, which the library does not hold yet`);
  shadowed(hosts, known, new Set(), log);
  return hosts;
}

/** Sites whose own domain is a name mapped to another site: said once each (`said`). */
export function shadowed(hosts: ReadonlyMap<string, string>, known: ReadonlySet<string>, said: Set<string>, log: (line: string) => void): void {
  for (const site of known) {
    const to = hosts.get(site);
    if (to === undefined || to === site || said.has(site)) continue;
    said.add(site);
    log(`airlock serve: warning: site ${site}: its domain is a host name mapped to ${to}, which it reaches; ${site} is served at /${site}/ only`);
  }
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
