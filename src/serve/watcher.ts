import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readActive } from './source.js';
import { turns } from '../util/turns.js';

/**
 * Notices `airlock activate`/`rollback` (a new S/state.json, renamed into place) within 1 s:
 * fs.watch on the store folder for promptness, a 250 ms poll because fs.watch misses events on
 * some file systems (NFS, overlayfs, renames on macOS), and `check()` for SIGHUP.
 * Checks never overlap; a change seen during a load is picked up by the next check. A poll reads
 * the pointer only when its file is another one than at the last poll (inode, size, times): a
 * stat, not a read and a parse. Watchers of one poll interval share one timer (pollTogether): a
 * library's open sites poll in one round every 2 s (those in use only: pause, resume).
 */
export interface WatcherOptions {
  store: string;
  current: () => string;
  /** Load and swap in `label`; must not throw for a bad version (log and keep serving). */
  switchTo: (label: string) => Promise<void>;
  onError: (err: unknown) => void;
  pollMs?: number;
  /** The store's folder is another one than at start (a site's folder swapped for another store): seen when its state.json changes. */
  onReplaced?: () => void;
}

/** Polls of one round in flight at once: a round of 500 sites never fills libuv's threadpool (a slow NFS stat would hold pages' file reads behind it). */
const AT_ONCE = 8;

/** The watchers polling every `ms`, the one timer that polls them all, and whether its last round is still going. */
type PollGroup = { timer: NodeJS.Timeout; polls: Set<() => Promise<void>>; busy: boolean };
const together = new Map<number, PollGroup>();

/**
 * Run `poll` every `ms` on the timer shared by every poll of that interval, AT_ONCE at a time; a
 * round still going when the next is due (a file system that hangs) is not doubled. The function
 * returned stops it.
 */
export function pollTogether(ms: number, poll: () => Promise<void>): () => void {
  let group = together.get(ms);
  if (group === undefined) {
    const inTurn = turns(AT_ONCE);
    const g: PollGroup = {
      polls: new Set(),
      busy: false,
      timer: setInterval(() => {
        if (g.busy) return;
        g.busy = true;
        // One stopped during the round (its site closed) is not run.
        const round = [...g.polls].map((p) => inTurn(() => (g.polls.has(p) ? p() : Promise.resolve())).catch(() => {}));
        void Promise.all(round).then(() => (g.busy = false));
      }, ms).unref(),
    };
    group = g;
    together.set(ms, g);
  }
  const g = group;
  g.polls.add(poll);
  return () => {
    if (!g.polls.delete(poll) || g.polls.size > 0) return;
    clearInterval(g.timer);
    if (together.get(ms) === g) together.delete(ms);
  };
}

export class ActiveWatcher {
  private fsw: FSWatcher | null = null;
  private stopPolling: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  /** A label that failed to load is not retried until state.json names another one. */
  private failed: string | null = null;
  /** state.json as the last poll found it (null: read it), and what that poll set going. */
  private polled: string | null = null;
  private changing: Promise<void> = Promise.resolve();
  /** The store folder's inode at start. */
  private folder: number | null = null;
  private started = false;

  private readonly stateFile: string;

  constructor(private readonly o: WatcherOptions) {
    this.stateFile = join(o.store, 'state.json');
  }

  start(): void {
    this.started = true;
    if (this.o.onReplaced)
      void stat(this.o.store).then(
        (s) => (this.folder = s.ino),
        () => {},
      );
    try {
      this.fsw = watch(this.o.store, (_ev, name) => {
        if (name === null || name === 'state.json') void this.check();
      });
      this.fsw.on('error', (err) => this.o.onError(err));
    } catch (err) {
      this.o.onError(err); // the poll still works
    }
    this.polling();
  }

  /** Poll on the timer shared by every watcher of this interval (once: a second call changes nothing). */
  private polling(): void {
    this.stopPolling ??= pollTogether(this.o.pollMs ?? 250, () => this.poll());
  }

  stop(): void {
    this.started = false;
    this.fsw?.close();
    this.fsw = null;
    this.pause();
  }

  /** No polls (a library's site no request reached lately); the file system's reports still switch. */
  pause(): void {
    this.stopPolling?.();
    this.stopPolling = null;
  }

  /** Polls again after pause(); resolves once the pointer is looked at now and any switch it names is done. */
  resume(): Promise<void> {
    if (!this.started) return Promise.resolve();
    this.polling();
    return this.poll(true).catch((err: unknown) => this.o.onError(err));
  }

  /**
   * A stat of state.json; what follows a change (the folder looked at, the pointer read, a switch)
   * is waited for only when `wait` (a request held until its site is up to date), not by a round.
   */
  private async poll(wait = false): Promise<void> {
    const file = await stat(this.stateFile).then(
      (s) => `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`,
      (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? 'none' : null), // another error: the read reports it
    );
    if (file !== null && file === this.polled) return wait ? this.changing : undefined; // seen by a poll still acting on it
    const first = this.polled === null;
    this.polled = file;
    const done = (this.changing = this.changed(first).catch((err: unknown) => this.o.onError(err)));
    if (wait) await done;
  }

  private async changed(first: boolean): Promise<void> {
    if (!first && (await this.swapped())) return this.o.onReplaced?.();
    await this.check();
  }

  /** SIGHUP: the store's folder and its pointer looked at now, whatever the poll saw. */
  async refresh(): Promise<void> {
    if (await this.swapped()) return this.o.onReplaced?.();
    await this.check();
  }

  private swapped(): Promise<boolean> {
    const at = this.folder;
    return at === null
      ? Promise.resolve(false)
      : stat(this.o.store).then(
          (s) => s.ino !== at,
          () => false,
        );
  }

  /**
   * Re-read the active pointer now; resolves when any resulting switch is done. A call during a
   * check waits for one more check after it (that one may have read the pointer before it moved).
   */
  check(): Promise<void> {
    if (this.running) {
      this.queued ??= this.running.then(() => {
        this.queued = null;
        return this.check();
      });
      return this.queued;
    }
    this.running = this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async run(): Promise<void> {
    let active: string | null;
    try {
      active = await readActive(this.o.store);
    } catch (err) {
      // state.json is replaced atomically, so a read error is a real fault: report, keep serving.
      this.o.onError(err);
      return;
    }
    if (active === null || active === this.o.current() || active === this.failed) return;
    try {
      await this.o.switchTo(active);
      this.failed = null;
    } catch (err) {
      this.failed = active;
      this.o.onError(err);
    }
  }
}
