import { join } from 'node:path';
import { librarySites, siteName } from '../store/library.js';
import { readMeta } from '../store/meta.js';
import { storePaths, versionPaths } from '../store/paths.js';
import { readState } from '../store/state.js';
import { openRegularFile } from '../util/regular-file.js';
import { plainText } from '../util/terminal.js';
import { forReaders } from './respond.js';

/** What the library's landing page and `/_airlock/library` say of one site (read from its store, not from a loaded version). */
export interface SiteSummary {
  domain: string;
  /** Its active version, or null (nothing active yet, or its store cannot be read: then `problem`). */
  version: string | null;
  /** The `<title>` of its home page (the domain when it has none). */
  title: string;
  pages: number | null;
  importedAt: string | null;
  /** Where a reader reaches it on this server when the Host does not name it. */
  path: string;
  problem: string | null;
}

/** Only the start of a home page is read for its title. */
const TITLE_BYTES = 64 * 1024;
const TITLE = /<title[^>]*>([^<]{0,500})<\/title>/i;

async function titleOf(site: string): Promise<string | null> {
  const fh = await openRegularFile(join(site, 'index.html'), (why) => new Error(why)).catch(() => null);
  if (fh === null) return null;
  try {
    const buf = Buffer.alloc(TITLE_BYTES);
    const { bytesRead } = await fh.read(buf, 0, TITLE_BYTES, 0);
    const m = TITLE.exec(buf.subarray(0, bytesRead).toString('utf8'));
    // The entity decoder (and the HTML scanner it comes with) loads only for a title that needs it.
    const raw = m?.[1] ?? '';
    // No control character or bidirectional override reaches the page (the landing page also isolates each title).
    const t = plainText(raw.includes('&') ? (await import('../search/extract.js')).decodeEntities(raw) : raw)
      .replace(/\s+/g, ' ')
      .trim();
    return t === '' ? null : t.slice(0, 200);
  } finally {
    await fh.close();
  }
}

export interface SiteListing {
  sites: SiteSummary[];
  skipped: Array<{ name: string; why: string }>;
}

/** How long one reading of the library answers its page and listing (the library itself is read again as often). */
export const LISTING_MS = 2000;

/**
 * One site's summary, cached by its active version (a site's title is read once per version). The
 * listing is read at most once per LISTING_MS, whatever the number of requests for it: one
 * reading is shared by every request made while it runs (a burst of landing-page requests on a
 * library of 1,000 sites costs one reading, not one each).
 */
export class SiteSummaries {
  private cache = new Map<string, SiteSummary>();
  private last: { at: number; listing: Promise<SiteListing> } | null = null;

  constructor(
    private readonly clock: () => number = Date.now,
    /** The version this server serves for a site whatever its store's pointer says (a pin, or a switch it refused); undefined: the pointer's. */
    private readonly pinned: (domain: string) => string | undefined = () => undefined,
  ) {}

  list(library: string): Promise<SiteListing> {
    const now = this.clock();
    if (this.last === null || now - this.last.at >= LISTING_MS || now < this.last.at) {
      const listing = this.read(library);
      this.last = { at: now, listing };
      listing.catch(() => (this.last = null));
    }
    return this.last.listing;
  }

  private async read(library: string): Promise<SiteListing> {
    const { sites, skipped } = await librarySites(library);
    const out = await Promise.all(sites.map((d) => this.one(library, d)));
    for (const k of this.cache.keys()) if (!sites.includes(k)) this.cache.delete(k);
    return { sites: out, skipped };
  }

  private async one(library: string, domain: string): Promise<SiteSummary> {
    const store = join(library, domain);
    const base = { domain, path: `/${domain}/` };
    try {
      const active = this.pinned(domain) ?? (await readState(store)).active;
      if (active === null) return { ...base, version: null, title: domain, pages: null, importedAt: null, problem: null };
      const cached = this.cache.get(domain);
      if (cached?.version === active) return cached;
      const dir = join(storePaths(store).versions, active);
      const meta = await readMeta(dir);
      // Another domain's package in this site's store is not served here (library.ts): nor listed under its title.
      if (siteName(meta.domain) !== domain)
        return {
          ...base,
          version: active,
          title: domain,
          pages: null,
          importedAt: null,
          problem: `the version it serves (${active}) is a package of ${meta.domain}`,
        };
      const s: SiteSummary = {
        ...base,
        version: active,
        title: (await titleOf(versionPaths(dir).site)) ?? domain,
        pages: meta.pageCount ?? null,
        importedAt: meta.importedAt,
        problem: null,
      };
      this.cache.set(domain, s);
      return s;
    } catch (err) {
      const problem = forReaders(library, err instanceof Error ? err.message : String(err));
      return { ...base, version: null, title: domain, pages: null, importedAt: null, problem };
    }
  }
}

/**
 * A site as readers should see it when its open server refused to switch to the store's active
 * version (a damaged version): summarised from the version it serves (SiteSummaries is told it),
 * with why it does not serve the one the store names.
 */
export function asServed(
  s: SiteSummary,
  open: { current: { version: string }; refused: { version: string; why: string } | null } | undefined,
  library: string,
): SiteSummary {
  if (open?.refused == null || open.current.version !== s.version || open.refused.version === s.version) return s;
  const why = forReaders(library, open.refused.why.replace(/^store \S+ is damaged: /, ''));
  return { ...s, problem: `serving ${s.version}: its active version ${open.refused.version} cannot be served (${why})` };
}
