import { StoreError } from '../errors.js';
import { versionFolders } from '../store/load.js';
import type { LoadedIndex } from './version-index.js';

export interface FolderGuardOptions {
  store: string;
  current: () => LoadedIndex;
  /** Drop what the memory cache read from the version's folders. */
  forget: (target: LoadedIndex) => void;
  /** A folder of the served version is a link now, or the version is gone: it cannot be served. */
  damaged: (target: LoadedIndex, why: string) => void;
  /** Its folders are other ones than it was read from (or back after damage): read it afresh. */
  changed: () => Promise<void>;
}

/**
 * Notices a served version's folders replaced while served. Files are opened without following
 * a final link, but a link higher up their path (`versions/V`, `versions/V/site`, `html`) would
 * be followed: a folder swapped for one, into anywhere the server can read, would be served as
 * the version. So the folders a version's files are read from are looked at (a few lstat calls)
 * at each poll, when a file could not be read, and on SIGHUP. A link there, or the version
 * removed (once a file of it could not be read), is damage (the version's files answer 503 naming it); another real folder, or the
 * folder put back, has the version read afresh. Either way the memory cache forgets what was read
 * from there. A prepared-pages or search folder made since the load is the server's own.
 */
export class FolderGuard {
  /** What was last seen of the folders of `of` (versionFolders, or '!' and why they cannot be read). */
  private seen: { of: LoadedIndex; at: string } | null = null;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly o: FolderGuardOptions) {}

  start(everyMs: number): void {
    this.timer = setInterval(() => void this.look(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Look now; one look at a time (a call during one shares it). The version gone is damage only
   * when `missing` (a file of it could not be read): until then, what memory holds of it is served.
   */
  look(missing = false): Promise<void> {
    if (missing && this.running) return this.running.then(() => this.look(true)); // that one may not count the version gone
    return (this.running ??= this.run(missing).finally(() => (this.running = null)));
  }

  private async run(missing: boolean): Promise<void> {
    const target = this.o.current();
    const was = target.source.folders;
    if (was === null) return;
    const now = await versionFolders(this.o.store, target.version).catch((err: unknown) =>
      err instanceof StoreError && err.code === 'AIRLOCK_VERSION_NOT_FOUND' && !missing ? null : new Error(err instanceof Error ? err.message : String(err)),
    );
    if (this.o.current() !== target || now === null) return; // switched meanwhile (the next look is at the new version), or gone but not missed
    const prev = this.seen?.of === target ? this.seen.at : was;
    const at = now instanceof Error ? '!' + now.message : now;
    this.seen = { of: target, at };
    if (at === prev || (!(now instanceof Error) && madeSince(prev, at))) return;
    this.o.forget(target);
    if (now instanceof Error) return this.o.damaged(target, now.message);
    await this.o.changed();
  }
}

/** Folder identities `now` differ from `was` only by folders made since (absent in `was`). */
function madeSince(was: string, now: string): boolean {
  const [a, b] = [was.split(':'), now.split(':')];
  return !was.startsWith('!') && a.length === b.length && a.every((x, i) => x === b[i] || x === '');
}
