import { isIP } from 'node:net';
import { AirlockError, UsageError } from '../errors.js';
import { isOn, resolveFeatures, type ResolvedFeatures } from '../features/resolve.js';
import { siteName } from '../store/library.js';
import { hostName } from '../serve/library-hosts.js';
import { escapeControls } from '../util/terminal.js';
import { mergeSettings, staticExportSettings, type StaticExportSettings } from '../values/settings.js';
import type { Values } from '../values/schema.js';

/**
 * What `serve --library` serves each site with (pure): the flags, then a values file's top level,
 * for every site; a site's own entry (`library.sites[]`) for that site. Everything is checked
 * before anything listens, and a refusal names the file, the entry and the site.
 */
export interface LibraryConfig {
  /** The features of a site without an entry of its own. */
  defaults: ResolvedFeatures;
  /** A site's own features and pinned version. */
  sites: Map<string, LibrarySite>;
  /** Extra host name → the site it reaches. */
  hosts: Map<string, string>;
  port?: string;
  host?: string;
}

/** A site's own settings from its library.sites[] entry. */
export interface LibrarySite {
  resolved: ResolvedFeatures;
  /** Served whatever the site's active version (its entry's version, else its staticExport.version). */
  version?: string;
  /** Its bundle, fetched into its store once the library listens (staticExport.bundleUrl). */
  bundle: StaticExportSettings | null;
}

export interface LibraryFlags {
  deployment?: string;
  enable?: string[];
  disable?: string[];
  port?: string;
  host?: string;
  'site-host'?: string[];
}

/** Values keys that set up one store's server: a library's sites each have their own store. */
const ONE_STORE = ['staticExport', 'store', 'mirror', 'follow', 'skewGraceSeconds', 'basePath', 'localAssistant'] as const;

/** A library relays nothing to the service (serve --assistant-url is one store's): search and assistant would show in its pages and never answer. */
function noRelay(resolved: ResolvedFeatures, whose: string): ResolvedFeatures {
  if (isOn(resolved, 'local-assistant'))
    throw new UsageError(
      `local-assistant is on for ${whose}: it answers on one store's server (serve --store with --assistant-model); a library does not answer it yet: leave it off`,
      { subject: '--enable' },
    );
  const on = (['search', 'assistant'] as const).filter((f) => isOn(resolved, f));
  if (on.length > 0)
    throw new UsageError(
      `${on.join(' and ')} ${on.length > 1 ? 'are' : 'is'} on for ${whose} (${resolved.deployment}) and would be relayed to the service, which serve --library does not do: turn ${on.length > 1 ? 'them' : 'it'} off (--disable ${on.join(',')}, or features in the values file)`,
      { subject: '--disable' },
    );
  return resolved;
}

export function libraryConfig(flags: LibraryFlags, values: Values | undefined, file: string): LibraryConfig {
  const given = ONE_STORE.filter((k) => values?.[k] !== undefined);
  if (given.length > 0)
    throw new UsageError(
      `values file ${file}: ${given.join(', ')} set up one store's server; serve --library does not take ${given.length > 1 ? 'them' : 'it'} (a site's bundle goes in library.sites[].staticExport; serve a site's store with --store for the rest)`,
      { subject: given[0]! },
      'AIRLOCK_BAD_VALUES',
    );
  const merged = mergeSettings(flags, values);
  const defaults = noRelay(resolveFeatures({ deployment: merged.deployment, enable: merged.enable, disable: merged.disable }), 'the library');
  const hosts = new Map<string, string>();
  const addHost = (name: string, domain: string, where: string) => {
    // The library's own address (its landing page, every site's path) is never a site's.
    const last = name.slice(name.lastIndexOf('.') + 1);
    if (isIP(name.replace(/^\[|\]$/g, '')) !== 0 || /^(\d+|0x[0-9a-f]*)$/i.test(last) || last === 'localhost')
      throw new UsageError(
        `${where}: ${name} is an address of this server, not a site's host name: it would take the library's own page and every site's path`,
        {
          subject: where,
        },
      );
    const before = hosts.get(name);
    if (before !== undefined && before !== domain)
      throw new UsageError(`${where}: ${name} already reaches ${before}; one host name reaches one site`, { subject: where });
    hosts.set(name, domain);
  };
  for (const g of flags['site-host'] ?? []) {
    const [name, domain, extra] = g.split('=');
    const n = name?.includes(':') ? null : hostName(name ?? ''); // a Host's port is dropped when matching: a name with one is not what it seems
    const d = siteName(domain ?? '');
    if (extra !== undefined || n === null || d === null)
      throw new UsageError(
        `--site-host ${JSON.stringify(g)}: give NAME=DOMAIN: the host name, then the site it reaches (vendor-docs.intranet=docs.vendor.example)`,
        { subject: '--site-host' },
      );
    addHost(n, d, '--site-host');
  }
  const sites = new Map<string, LibrarySite>();
  const entryOf = new Map<string, number>();
  (values?.library?.sites ?? []).forEach((s, i) => {
    const where = `values file ${file}: library.sites[${i}]`;
    const domain = siteName(s.domain);
    if (domain === null)
      throw new UsageError(`${where}: domain ${escapeControls(s.domain)} is not a site's domain (a host name with a dot, like docs.example.com)`, {
        subject: `library.sites[${i}].domain`,
      });
    const first = entryOf.get(domain);
    if (first !== undefined)
      throw new UsageError(`${where}: ${domain} has an entry already (library.sites[${first}])`, { subject: `library.sites[${i}].domain` });
    entryOf.set(domain, i);
    const own = Object.entries(s.features ?? {}).filter(([, on]) => on !== undefined);
    const named = new Set(own.map(([f]) => f));
    try {
      const resolved = resolveFeatures({
        deployment: s.deployment?.type ?? merged.deployment,
        enable: [...merged.enable.filter((f) => !named.has(f)), ...own.filter(([, on]) => on).map(([f]) => f)],
        disable: [...merged.disable.filter((f) => !named.has(f)), ...own.filter(([, on]) => !on).map(([f]) => f)],
      });
      const bundle = staticExportSettings(s.staticExport);
      if (bundle?.domain !== undefined && bundle.domain.toLowerCase() !== domain)
        throw new UsageError(`${where}: staticExport.domain ${bundle.domain} is not the site's domain ${domain}`, {
          subject: `library.sites[${i}].staticExport.domain`,
        });
      sites.set(domain, { resolved: noRelay(resolved, domain), version: s.version ?? s.staticExport?.version, bundle });
    } catch (err) {
      if (err instanceof AirlockError) throw new UsageError(`${where} (${domain}): ${err.message}`, { subject: `library.sites[${i}]` });
      throw err;
    }
    for (const h of s.hosts ?? []) {
      const n = h.includes(':') ? null : hostName(h);
      if (n === null) throw new UsageError(`${where}: hosts: ${escapeControls(h)} is not a host name`, { subject: `library.sites[${i}].hosts` });
      addHost(n, domain, `${where}.hosts`);
    }
  });
  return { defaults, sites, hosts, port: merged.port, host: merged.host };
}
