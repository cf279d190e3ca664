import { join } from 'node:path';
import { siteName } from '../store/library.js';
import { escapeControls } from '../util/terminal.js';
import { forReaders } from './respond.js';
import { openSite, type OpenSite } from './server.js';
import type { LibraryServerOptions } from './library-types.js';

/**
 * The sites of a library open now (library.ts routes requests to them): each opened on its first
 * request, on its own, and closed after `idleMs` without one. A site in use polls its active
 * pointer and looks at its folders every scan; an idle one only hears the file system's reports
 * (fs.watch), and a request that finds it idle waits for its pointer to be looked at first, so that
 * an activation the file system did not report (NFS) is served from that request on.
 */
export interface OpenSitesOptions extends Pick<LibraryServerOptions, 'library' | 'siteOptions'> {
  log: (line: string) => void;
  clock: () => number;
  idleMs: number;
  /** How often sweep() runs: a site no request reached for this long stops polling. */
  scanMs: number;
}

/** A site open now: when a request last reached it, and whether it is idle (not polling). */
export interface LiveSite {
  site: OpenSite;
  used: number;
  idle: boolean;
  waking: Promise<void> | null;
}

/** Why an open site can no longer be served: its version is another domain's package (put into its store by hand), or its files are gone. */
export function unservable(s: OpenSite, domain: string): string | null {
  const held = s.versions.current.domain;
  if (held !== '' && held !== domain && siteName(held) !== domain)
    return `the version it serves (${s.versions.current.version}) is a package of ${escapeControls(held)}`;
  return s.versions.broken;
}

export class OpenSites {
  /** Sites being opened or open. */
  private readonly open = new Map<string, Promise<OpenSite>>();
  /** Sites open now, for requests to be handed to at once. */
  readonly live = new Map<string, LiveSite>();
  /** Sites that could not be opened or served, with why (as readers see it) and when. */
  readonly failed = new Map<string, { at: number; message: string }>();
  /** Followed sites: never closed as idle. */
  private readonly held = new Set<string>();

  constructor(private readonly o: OpenSitesOptions) {}

  /** A followed site: never closed as idle. */
  hold(domain: string): void {
    this.held.add(domain);
  }

  opened(): string[] {
    return [...this.open.keys()];
  }

  private site(domain: string): Promise<OpenSite> {
    let p = this.open.get(domain);
    if (p !== undefined) return p;
    const replaced = () => {
      this.o.log(`airlock serve: site ${domain}: its folder was replaced by another store; it is opened again`);
      this.close(domain);
    };
    p = Promise.resolve(this.o.siteOptions(domain))
      .then((opts) => openSite({ ...opts, store: join(this.o.library, domain), onReplaced: replaced, guardMs: null }))
      .then(async (s) => {
        const why = unservable(s, domain);
        if (why !== null) await s.close().then(() => Promise.reject(new Error(why))); // nothing of it prepared
        return s;
      });
    this.open.set(domain, p);
    p.then(
      (s) => {
        if (this.open.get(domain) !== p) return; // closed while it was being opened (close() closes it)
        this.live.set(domain, { site: s, used: this.o.clock(), idle: false, waking: null });
        this.failed.delete(domain);
        s.versions.current.preparing?.release(); // opened by a request: the server is listening
        this.o.log(`airlock serve: opened site ${domain}`);
      },
      (err: unknown) => {
        if (this.open.get(domain) === p) this.open.delete(domain); // tried again by a later request
        this.fail(domain, err instanceof Error ? err.message : String(err));
      },
    );
    return p;
  }

  /** The open site, up to date with its store; a rejection when it cannot be served (switched to another domain's package, or its files gone: closed, said). */
  async servable(domain: string): Promise<OpenSite> {
    const s = await this.site(domain);
    const e = this.live.get(domain);
    if (e !== undefined) {
      e.used = this.o.clock();
      if (e.idle) await this.wake(e);
    }
    const why = unservable(s, domain);
    if (why === null) return s;
    this.close(domain);
    this.fail(domain, why);
    throw new Error(why);
  }

  /** An idle site asked for: its pointer looked at now (a switch it names done), then polled again. */
  private wake(e: LiveSite): Promise<void> {
    return (e.waking ??= e.site.versions.inUse().finally(() => {
      e.idle = false;
      e.waking = null;
    }));
  }

  /** Every scan: a site idle for idleMs closed (unless followed); one in use has its folders looked at; one no request reached since the last scan stops polling. */
  sweep(): void {
    const now = this.o.clock();
    for (const [d, e] of this.live)
      if (now - e.used > this.o.idleMs && !this.held.has(d)) this.close(d);
      else if (now - e.used <= this.o.scanMs)
        void e.site.versions.guard(); // in use: its folders looked at (folder-guard.ts)
      else if (!e.idle && e.waking === null) {
        e.idle = true;
        e.site.versions.idle();
      }
  }

  /** A site that cannot be served: said once per reason, answered 503 with it. */
  fail(domain: string, message: string): void {
    const shown = forReaders(this.o.library, message);
    if (this.failed.get(domain)?.message !== shown) this.o.log(`airlock serve: site ${domain} cannot be served: ${message}`);
    this.failed.set(domain, { at: this.o.clock(), message: shown });
  }

  close(domain: string): void {
    const p = this.open.get(domain);
    this.open.delete(domain);
    this.live.delete(domain);
    void p?.then((s) => s.close()).catch(() => {});
  }

  async closeAll(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    this.live.clear();
    await Promise.all(all.map((p) => p.then((s) => s.close()).catch(() => {})));
  }

  /** Every open site's pointer and folders looked at now (SIGHUP). */
  async recheck(): Promise<void> {
    await Promise.all([...this.open.values()].map((p) => p.then((s) => s.versions.recheck()).catch(() => {})));
  }
}
