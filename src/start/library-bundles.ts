import { join } from 'node:path';
import { toAirlockError, UsageError } from '../errors.js';
import { removeCreated, storeKind } from '../store/location.js';
import { listVersions } from '../store/list.js';
import { siteStore } from '../store/library.js';
import { readState } from '../store/state.js';
import { planStart } from '../values/plan.js';
import type { LibrarySite } from './library-config.js';
import type { StaticExportSettings } from '../values/settings.js';

/**
 * A library's bundles (`library.sites[].staticExport.bundleUrl`): once the library listens, each
 * site's bundle is fetched into the site's own store, one site at a time, by the rule `serve
 * --values` follows for one store (values/plan.ts). A pinned version the store has is not
 * downloaded again; a site with a version keeps serving it while its bundle downloads and switches
 * once the bundle is imported and activated; a site with none answers 503 until then. A package
 * must be of the site's own domain (a raw archive is made one of it), checked by the site's own
 * trust keys and its store's policy. A bundle that fails is said loudly and leaves the site as it was.
 */
export interface SiteBundlesOptions {
  library: string;
  sites: ReadonlyMap<string, LibrarySite>;
  signal: AbortSignal;
  log: (line: string) => void;
  /** A site's bundle was tried: installed or not needed (null), or why it could not be. */
  tried?: (domain: string, failure: string | null) => Promise<void>;
}

export async function fetchSiteBundles(o: SiteBundlesOptions): Promise<void> {
  for (const [domain, site] of o.sites) {
    if (site.bundle === null || o.signal.aborted) continue;
    await o.tried?.(domain, await trySite(domain, site, site.bundle, o));
  }
}

async function trySite(domain: string, site: LibrarySite, se: StaticExportSettings, o: SiteBundlesOptions): Promise<string | null> {
  const say = (line: string) => o.log(`airlock serve: ${domain}: ${line}`);
  let made: string | null = null; // the site's folder, when this try makes it
  try {
    // Its entry, when there, must be a folder of its own: a link or a file in the library is never written through.
    const store = await siteStore(o.library, domain, 'library.sites[].domain');
    if ((await storeKind(store)) === 'missing') made = store;
    const active = (await readState(store)).active;
    const labels = (await listVersions(store)).map((v) => v.version);
    const plan = planStart({ version: site.version, bundleUrl: se.bundleUrl, worker: false, values: true }, { active, labels }, store);
    if (plan.kind !== 'download') {
      say(plan.kind === 'serve' ? plan.why : plan.message);
      return plan.kind === 'serve' ? null : plan.message;
    }
    say(plan.fallback === null ? 'no version to serve yet: fetching its bundle' : `serving version ${plan.fallback} while its bundle downloads`);
    const { installBundle } = await import('../store/bundle-install.js');
    const r = await installBundle({
      url: plan.url,
      store,
      label: plan.label,
      site: domain,
      trust: se.trust,
      allowUnsigned: se.allowUnsigned,
      limits: se.limits,
      maxBytes: se.maxBytes,
      activate: plan.label === undefined,
      signal: o.signal,
      log: (l) => say(l.replace(/^airlock serve: /, '')),
    });
    say(
      `${r.status === 'imported' ? 'imported' : 'already had'} version ${r.version} from its bundle (${r.form})${plan.label === undefined ? ', now active' : ''}`,
    );
    return null;
  } catch (err) {
    // A site's folder this try made and left empty (a refused bundle: its download removed) goes
    // away, so the site is listed with why it is missing, not as a store with no version.
    if (made !== null) await removeCreated([made, join(made, 'downloads')]);
    if (o.signal.aborted) return null;
    const e = toAirlockError(err);
    say(`WARNING: its bundle (library.sites[].staticExport.bundleUrl) could not be installed: ${e.code}: ${e.message}; the site is served as it was`);
    return `its bundle could not be installed: ${e.code}: ${e.message}`;
  }
}

/** Every site's bundle keys read before anything listens (a missing, unreadable or private key is the values file's fault: exit 2 naming the entry). */
export async function checkBundleKeys(sites: ReadonlyMap<string, LibrarySite>, file: string): Promise<void> {
  const { loadPublicKey } = await import('../package/keys.js');
  for (const [domain, site] of sites) {
    for (const p of site.bundle?.trust ?? []) {
      await loadPublicKey(p).catch((err: unknown) => {
        throw new UsageError(`values file ${file}: library.sites (${domain}): staticExport.trust: ${toAirlockError(err).message}`, {
          subject: 'library.sites[].staticExport.trust',
        });
      });
    }
  }
}
