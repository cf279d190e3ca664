import { join } from 'node:path';
import { z } from 'zod';
import type { Follower } from '../fleet/follow.js';
import type { LibraryServer } from '../serve/library-types.js';
import { librarySites, siteName, siteStore } from '../store/library.js';
import { readState } from '../store/state.js';
import { netError } from '../upstream/net-error.js';
import { cappedText } from '../util/capped-body.js';
import { toAirlockError, UpstreamError } from '../errors.js';
import { turns, type Turns } from '../util/turns.js';

/**
 * `serve --library LIB --follow URL`: a replica of a library mirror (`serve --library --mirror`
 * at URL). The mirror's listing (`URL/_airlock/library`) names its sites; each is followed as one
 * store's replica follows (src/fleet), at `URL/<domain>`, into `LIB/<domain>`: a site with no
 * version gets the mirror's active one first (it answers 503 meanwhile), then switches with the
 * rest of its fleet. The listing is read again every LISTING_POLL_MS: a site added to the mirror
 * is followed; one removed keeps being served as it was. `/_airlock/ready` is 503 until every site
 * of the first listing has a version.
 */
export interface LibraryFollowOptions {
  url: string;
  library: string;
  lib: LibraryServer;
  follower: (o: { mirror: string; store: string; site: string; log: (line: string) => void; inTurn: Turns }) => Follower;
  signal: AbortSignal;
  log: (line: string) => void;
  /** Sites of the mirror still without a version here (readiness). */
  preparing: Set<string>;
  /** The sites followed, each with its follower (filled here; read for `/_airlock/ready`). */
  followed?: Map<string, Follower>;
}

const LISTING_POLL_MS = 10_000;

/** What readiness waits for until the mirror's listing was read (put in `preparing` before the server listens). */
export const listingOf = (url: string) => `the listing of ${url}`;
/** What readiness waits for while no site of the mirror has a version here (a replica serving nothing is not ready). */
const ANY_VERSION = "a version of one of the mirror's sites";
/** The most sites followed (a mirror's listing may name more: the rest are said once and left). */
export const MAX_FOLLOWED = 1000;
/** Downloads and imports from the mirror at once, whichever the sites (each a download, a verification and an import). */
const FILLING = 4;
const LISTING_MAX_BYTES = 4 * 1024 * 1024;
const Listing = z.looseObject({ sites: z.array(z.looseObject({ domain: z.string().max(253) })).max(10_000) });

/** The mirror's sites (its listing is public, as its landing page is), each checked as a site's domain. */
async function mirrorSites(url: string, signal: AbortSignal): Promise<string[]> {
  const at = `${url}/_airlock/library`;
  let res: Response;
  let text: string | null;
  try {
    res = await fetch(at, { signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]), redirect: 'error' });
    text = res.status === 200 ? await cappedText(res.body, LISTING_MAX_BYTES) : null;
  } catch (err) {
    throw netError(err, { url: at, timeoutMs: 10_000, what: "the mirror's library listing" });
  }
  const not = (why: string) =>
    new UpstreamError(`${at} ${why} (is ${url} an airlock serve --library --mirror?)`, res.status, { subject: at }, 'AIRLOCK_MIRROR_UNREACHABLE');
  if (res.status !== 200) throw not(`answered HTTP ${res.status}`);
  if (text === null) throw not(`is larger than ${LISTING_MAX_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw not('is not JSON');
  }
  const parsed = Listing.safeParse(json);
  if (!parsed.success) throw not('is not a library listing');
  return parsed.data.sites.map((s) => siteName(s.domain)).filter((d): d is string => d !== null);
}

/** What `/_airlock/ready` says of the followed sites: how many, and those not in step with their mirror (at most 50 named). */
export function followNotes(followed: ReadonlyMap<string, Follower>): Record<string, unknown> | null {
  if (followed.size === 0) return null;
  const problems: Record<string, object> = {};
  let n = 0;
  for (const [d, f] of followed) {
    const s = f.status;
    if (s.mirror_state !== 'unreachable' && s.refused === null && s.downloadError === null) continue;
    if (++n <= 50) problems[d] = { mirror_state: s.mirror_state, error: s.error, refused: s.refused, downloadError: s.downloadError };
  }
  return { follow: { sites: followed.size, withProblems: n, ...(n > 0 ? { problems } : {}) } };
}

export async function followLibrary(o: LibraryFollowOptions): Promise<void> {
  const followed = o.followed ?? new Map<string, Follower>();
  let first = true;
  let saidTooMany = false;
  const fill = turns(FILLING);
  const listing = listingOf(o.url); // in `preparing` from before the server listened: not ready before the mirror said which sites it has
  o.preparing.add(ANY_VERSION);
  try {
    while (!o.signal.aborted) {
      const sites = await mirrorSites(o.url, o.signal).catch(async (err: unknown) => {
        if (!o.signal.aborted) o.log(`airlock serve: follow: ${toAirlockError(err).message}; trying again in ${LISTING_POLL_MS / 1000} s`);
        // Unreachable at start, with sites here: they are served and the replica is ready, as one store's replica is.
        if (first && (await librarySites(o.library).catch(() => ({ sites: [] }))).sites.length > 0) {
          o.preparing.delete(listing);
          o.preparing.delete(ANY_VERSION);
        }
        return null;
      });
      if (sites !== null && sites.length > MAX_FOLLOWED && !saidTooMany) {
        saidTooMany = true;
        o.log(`airlock serve: follow: the mirror lists ${sites.length} sites; the first ${MAX_FOLLOWED} are followed, the rest not`);
      }
      // A site the mirror no longer lists is no longer followed (it keeps being served as it is).
      const listed = new Set((sites ?? []).slice(0, MAX_FOLLOWED));
      for (const [d, f] of sites === null ? [] : followed) {
        if (listed.has(d)) continue;
        followed.delete(d);
        o.preparing.delete(d);
        o.log(`airlock serve: ${d}: follow: the mirror no longer lists this site; it is served as it is, no longer followed`);
        void f.stop();
      }
      for (const d of listed) {
        if (followed.has(d)) continue;
        if (first) o.preparing.add(d);
        const say = (line: string) => o.log(`airlock serve: ${d}: ${line.replace(/^airlock serve: /, '')}`);
        const f = o.follower({ mirror: `${o.url}/${d}`, store: join(o.library, d), site: d, log: say, inTurn: fill });
        followed.set(d, f);
        void startSite(d, f, o, say);
      }
      if (sites !== null) {
        first = false;
        o.preparing.delete(listing);
        if (sites.length === 0) o.preparing.delete(ANY_VERSION); // nothing to wait for
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, LISTING_POLL_MS);
        o.signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
      });
    }
  } finally {
    await Promise.all([...followed.values()].map((f) => f.stop()));
  }
}

/** A site's store filled from the mirror when it has no version, then followed on its open site. */
async function startSite(d: string, f: Follower, o: LibraryFollowOptions, say: (line: string) => void): Promise<void> {
  try {
    // Its entry, when there, must be a folder of its own: a link or a file in the library is never written through.
    const store = await siteStore(o.library, d, "the mirror's site");
    const active = await readState(store)
      .then((s) => s.active)
      .catch(() => null);
    if (active === null) {
      say("no version here yet: getting the mirror's");
      // Readiness waits for one try, not for ever: a site the mirror has no version of, or refused here, is not waited for.
      say(`follow: ${await f.first(o.signal, { keep: true, tried: () => o.preparing.delete(d) })} imported and active`);
      await o.lib.recheck();
    }
    o.preparing.delete(ANY_VERSION); // a site of the mirror is served here
    if (o.signal.aborted) return;
    // Opened before following: the follower sees the version it serves (not none, which it would download again).
    const target = o.lib.follow(d);
    await target.recheck();
    f.start(target);
  } catch (err) {
    if (!o.signal.aborted) say(`follow: the site cannot be followed: ${toAirlockError(err).message}`);
  } finally {
    o.preparing.delete(d);
  }
}
