import { lstat, readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { readMeta } from './meta.js';
import { versionDir } from './paths.js';
import { EXIT, StoreError, UsageError } from '../errors.js';
import { DOMAIN } from '../package/label.js';
import { readPackage } from '../package/reader.js';
import { isDeltaPackage, readDelta } from '../delta/index.js';
import { kindOf } from '../util/fsx.js';
import { escapeControls } from '../util/terminal.js';
import { storeKind } from './location.js';

/**
 * A library: a folder of stores, one per site, each named by its site's domain in lower case
 * (LIB/docs.vendor.example/). Each is a whole store (its own lock, audit log, trust policy,
 * leases), so one vendor's keys never admit another site's pages. Nothing else is kept at the
 * library's level: a site is added by importing into it, removed by removing its folder.
 */

/**
 * The library's folder name for a domain: the host name in lower case, without a trailing dot;
 * null when it is not a site's domain: not a host name, a single label (`localhost`) or an IP
 * address (which would take the library's own address, and every site's path, for its own).
 */
export function siteName(domain: string): string | null {
  const d = domain.toLowerCase().replace(/\.$/, '');
  return DOMAIN.test(d) && d.includes('.') && !/^\d+$/.test(d.slice(d.lastIndexOf('.') + 1)) ? d : null;
}

/**
 * The store of site `domain` in `library` (it may not exist yet). Its entry, when there, must be a
 * folder of its own: a link (to another site's store, to /) is no site, and is never followed.
 */
export async function siteStore(library: string, domain: string, subject = '--site'): Promise<string> {
  await notAStore(library);
  const name = siteName(domain);
  if (name === null)
    throw new UsageError(`${subject} ${escapeControls(domain)} is not a site's domain: a host name with a dot, like docs.example.com, not an address`, {
      subject,
    });
  const store = join(library, name);
  const st = await lstat(store).catch(() => null);
  if (st !== null && !st.isDirectory())
    throw new StoreError(
      'AIRLOCK_STORE_PATH',
      `${store} is ${st.isFile() ? 'a file' : kindOf(st)}, not a site's store folder; a library's sites are its own folders`,
      { subject: store },
      EXIT.USAGE,
    );
  return store;
}

/** Files that make a folder a store (a library holds none of them). */
const STORE_OWN = ['versions', 'state.json', 'audit.log'];
const exists = async (path: string) => (await lstat(path).catch(() => null)) !== null;

/** A library is a folder of stores, never a store itself (`--library` given a store: its sites would nest inside it). */
async function notAStore(library: string): Promise<void> {
  for (const own of STORE_OWN) {
    if (await exists(join(library, own)))
      throw new UsageError(
        `${library} is a store (it holds ${own}), not a library of stores: give its folder with --store, or the library that holds it with --library`,
        {
          subject: '--library',
        },
      );
  }
}

/**
 * A store is never a library: `--store` given a library's folder would make it a store around its
 * sites (its audit log, trust and versions beside their folders). A folder that is no store yet
 * and holds a site's store (a sub-folder named by a domain, itself holding a store's files) is
 * refused before anything is written. `--library` given a store is refused by notAStore.
 */
export async function notALibrary(store: string): Promise<void> {
  for (const own of STORE_OWN) if (await exists(join(store, own))) return; // a store already
  const entries = (await readdir(store, { withFileTypes: true }).catch(() => [])).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries.slice(0, 1000)) {
    if (!e.isDirectory() || siteName(e.name) !== e.name) continue;
    const own = [];
    for (const f of STORE_OWN) if (await exists(join(store, e.name, f))) own.push(f);
    if (own.length > 0)
      throw new UsageError(
        `${store} is a library of stores (its folder ${e.name} is a site's store), not a store: give it with --library, or one site's folder with --store`,
        { subject: '--store' },
      );
  }
}

export interface LibraryListing {
  /** The sites' domains, sorted. */
  sites: string[];
  /** Entries that are not sites, each with why (served nowhere; worth a warning). */
  skipped: Array<{ name: string; why: string }>;
}

/**
 * The sites of a library: its sub-folders named by a host name in lower case. A file, a link, a
 * name that is not a host name (or not in lower case) is no site, and is reported, never followed.
 */
export async function librarySites(library: string): Promise<LibraryListing> {
  if ((await storeKind(library).catch(() => 'missing')) === 'missing')
    throw new StoreError(
      'AIRLOCK_NO_LIBRARY',
      `library ${library} does not exist or is not a folder; create it by importing a package (airlock import PKG --library ${library})`,
      { subject: library },
      EXIT.USAGE,
    );
  await notAStore(library);
  // The entry's own type (a link is a link, never followed), from the folder listing itself: no stat per site.
  const entries = (await readdir(library, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const sites: string[] = [];
  const skipped: LibraryListing['skipped'] = [];
  for (const entry of entries) {
    const name = entry.name;
    if (name.startsWith('.')) continue;
    if (!entry.isDirectory()) skipped.push({ name, why: `is ${entry.isFile() ? 'a file' : kindOf(entry)}, not a site's store folder` });
    else if (siteName(name) !== name) skipped.push({ name, why: 'is not named by a site domain in lower case (like docs.example.com)' });
    else sites.push(name);
  }
  return { sites, skipped };
}

/**
 * The store a command works on with `--library LIB [--site DOMAIN]`: the site's store, which
 * must exist; without --site, the library's only site.
 */
export async function chooseSite(library: string, site: string | undefined): Promise<string> {
  if (site !== undefined) {
    const store = await siteStore(library, site);
    if ((await storeKind(store)) === 'missing') {
      const { sites } = await librarySites(library);
      throw new StoreError(
        'AIRLOCK_NO_SITE',
        `library ${library} has no site ${escapeControls(site)}; it holds ${sites.length === 0 ? 'none' : sites.join(', ')}`,
        { subject: '--site' },
        EXIT.USAGE,
      );
    }
    return store;
  }
  const { sites } = await librarySites(library);
  if (sites.length === 1) return join(library, sites[0]!);
  throw new UsageError(
    sites.length === 0
      ? `library ${library} holds no site yet; import one with airlock import PKG --library ${library}`
      : `library ${library} holds ${sites.length} sites; choose one with --site (${sites.join(', ')})`,
    { subject: '--site' },
  );
}

/** The domain a package or delta is for, read from its manifest (the package itself is verified by the import). */
export async function packageDomain(path: string): Promise<string> {
  const abs = resolve(path);
  return (await isDeltaPackage(abs)) ? (await readDelta(abs)).manifest.domain : (await readPackage(abs)).manifest.domain;
}

/**
 * `activate V --library LIB --site D`: V must be a package of D (one put into the site's store
 * with --store, which does not check, would take the site down: serve answers 503 for it). A
 * version that cannot be read is left to activate to refuse.
 */
export async function checkSiteVersion(store: string, label: string): Promise<void> {
  const meta = await readMeta(versionDir(store, label)).catch(() => null);
  const site = basename(store);
  if (meta !== null && siteName(meta.domain) !== site)
    throw new StoreError(
      'AIRLOCK_DOMAIN_MISMATCH',
      `version ${label} is a package of ${escapeControls(meta.domain)}, not of site ${site}; nothing was changed (import it with --library, into its own site)`,
      { subject: label },
    );
}
