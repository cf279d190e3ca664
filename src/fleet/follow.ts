import { hostname } from 'node:os';
import { toAirlockError, UpstreamError } from '../errors.js';
import type { FleetAnswer, FleetReport } from '../mirror/index.js';
import { activate } from '../store/index.js';
import { installAnnounced, isRefusal, pause } from './install.js';
import { pollMirror } from './poll.js';
import { startingStatus, type FollowStatus } from './status.js';
import type { FollowTarget } from './target.js';

/**
 * `airlock serve --follow MIRROR_URL`: this replica polls the mirror's fleet endpoint
 * (src/mirror/fleet.ts) every `pollMs` (±20 % jitter; backing off to 30 s while the mirror is
 * unreachable), and when the mirror's active version changes it downloads the signed package
 * (resumable, retried after a growing wait while the polls go on, so that the mirror keeps
 * counting this replica in the rollout; a mirror gone mid-download leaves a part in S/downloads
 * and nothing in the versions), verifies it with the trust of `airlock import`, imports it
 * unactivated and pre-loads it. At the switch instant the mirror announces, it activates the
 * version in its own store and swaps it in. A version that fails verification is never switched
 * to: it is reported to the mirror (which then holds the rollout for the whole fleet) and shown by
 * /_airlock/ready.
 * The mirror being unreachable changes nothing that is served; the status says since when.
 */
export interface FollowOptions {
  mirror: string;
  token: string;
  store: string;
  /** A library's site: the mirror's packages must be of this domain (another site's is refused, not imported). */
  site?: string;
  /** Runs each download and import when its turn comes (a library's sites take turns); default at once. */
  inTurn?: <T>(work: () => Promise<T>) => Promise<T>;
  trust: string[];
  allowUnsigned: boolean;
  pollMs?: number;
  replicaId?: string;
  log: (line: string) => void;
  onImport?: (seconds: number, result: 'ok' | 'failed') => void;
  onRefused?: (version: string) => void;
  /** Called with the time a switch happened (ms since the epoch). */
  onSwitch?: (version: string, at: number) => void;
}

const MAX_BACKOFF_MS = 30_000;

const hostPart = () =>
  hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 100) || 'replica';
const defaultReplicaId = () => `${hostPart()}:${process.pid}`;
/** One line for logs and /_airlock/ready, by code (network failures are ours by now: src/upstream/net-error.ts). */
const message = (err: unknown) => {
  const e = toAirlockError(err);
  return `${e.code}: ${e.message}`.slice(0, 1024);
};

export class Follower {
  private target: FollowTarget | null = null;
  private timer: NodeJS.Timeout | null = null;
  private switchTimer: NodeJS.Timeout | null = null;
  private switchFor: string | null = null;
  private failures = 0;
  /** Installs failed in a row (not refusals), and when the next may start: a failing download is not retried at every poll. */
  private retries = 0;
  private retryAt = 0;
  private stopped = false;
  private polling: Promise<void> | null = null;
  private preparing: Promise<void> | null = null;
  private switching: Promise<void> | null = null;
  private readonly abort = new AbortController();
  private readonly pollMs: number;
  private readonly base: string;
  readonly status: FollowStatus;

  constructor(private readonly o: FollowOptions) {
    this.pollMs = o.pollMs ?? 2_000;
    this.base = o.mirror.replace(/\/+$/, '');
    this.status = startingStatus(this.base, o.replicaId ?? defaultReplicaId());
  }

  /** Follow on behalf of a running server. */
  start(target: FollowTarget): void {
    this.target = target;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort(new Error('stopping'));
    if (this.timer) clearTimeout(this.timer);
    if (this.switchTimer) clearTimeout(this.switchTimer);
    await this.polling?.catch(() => {});
    await this.preparing?.catch(() => {});
    await this.switching?.catch(() => {});
  }

  /**
   * Before there is a server (an empty store): poll until the mirror has an active version, then
   * install and activate it. Resolves with the label; stops (rejects) on `signal`. A refused
   * version rejects, unless `keep` (a library's site): it is then reported, and the next version
   * the mirror announces is tried. `tried` is called after each answer of the mirror that installed nothing.
   */
  async first(signal: AbortSignal, o: { keep?: boolean; tried?: () => void } = {}): Promise<string> {
    for (;;) {
      signal.throwIfAborted();
      let a: FleetAnswer | null = null;
      let answered = false; // the mirror answered, if only with an HTTP error (a site it has no version of)
      try {
        a = await this.poll();
        answered = true;
      } catch (err) {
        if (signal.aborted) throw err;
        this.note(err);
        answered = err instanceof UpstreamError && err.status !== undefined;
      }
      if (a !== null && (a.version === null || a.packageUrl === null)) this.status.error = 'the mirror has no active version yet';
      else if (a !== null && this.status.refused?.version !== a.version && performance.now() >= this.retryAt) {
        try {
          await installAnnounced(this.o, a, signal);
          await activate(this.o.store, a.version!);
          this.status.refused = null; // an older refusal is history once a version is served
          return a.version!;
        } catch (err) {
          if (signal.aborted || (isRefusal(err) && !o.keep)) throw err; // nothing to serve but a refused version
          this.failed(a.version!, err);
        }
      }
      if (answered) o.tried?.(); // no version, an HTTP error, or a version refused here
      await pause(this.delay(), signal);
    }
  }

  /** Installing `v` failed: refused (reported, never tried again) or a failure tried again later, backing off. */
  private failed(v: string, err: unknown): void {
    const m = message(err);
    if (isRefusal(err)) {
      this.status.refused = { version: v, reason: m };
      this.o.onRefused?.(v);
      this.o.log(`airlock serve: follow: REFUSED VERSION ${v}: ${m}; not switching to it (reported to the mirror)`);
      return;
    }
    if (this.status.downloadError !== m) this.o.log(`airlock serve: follow: could not prepare ${v} (${m}); retrying`);
    this.status.downloadError = m;
    this.retries++;
    this.retryAt = performance.now() + this.backoff(this.retries);
  }

  private backoff(n: number): number {
    return n === 0 ? this.pollMs : Math.min(MAX_BACKOFF_MS, this.pollMs * 2 ** Math.min(n, 10));
  }

  /** The next poll: slower only while the mirror fails to answer (a failing download waits on `retryAt`, not on the polls). */
  private delay(): number {
    return Math.round(this.backoff(this.failures) * (0.8 + Math.random() * 0.4));
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.polling = this.tick().finally(() => {
        this.polling = null;
        this.schedule(this.delay());
      });
    }, ms);
    this.timer.unref();
  }

  /** Poll again soon (a state change the mirror should hear about), unless one is under way. */
  private soon(): void {
    if (this.polling === null) this.schedule(0);
  }

  private note(err: unknown): void {
    const m = message(err);
    this.failures++;
    if (this.status.mirror_state !== 'unreachable' || this.status.error !== m) {
      this.o.log(`airlock serve: follow: mirror ${this.base} unreachable (${m}); still serving ${this.target?.current() ?? 'nothing'}, retrying`);
    }
    this.status.mirror_state = 'unreachable';
    this.status.error = m;
  }

  private report(): FleetReport {
    return { replica: this.status.replica, serving: this.target?.current() ?? null, prepared: this.status.prepared, refused: this.status.refused };
  }

  private async poll(): Promise<FleetAnswer> {
    const a = await pollMirror(this.base, this.o.token, this.report(), this.abort.signal);
    if (this.status.mirror_state === 'unreachable') this.o.log(`airlock serve: follow: mirror ${this.base} reachable again`);
    this.failures = 0;
    this.status.mirror_state = 'ok';
    this.status.error = null;
    this.status.lastContactAt = new Date().toISOString();
    this.status.announced = { version: a.version, phase: a.phase };
    return a;
  }

  private async tick(): Promise<void> {
    let a: FleetAnswer;
    const receivedAt = () => performance.now();
    try {
      a = await this.poll();
    } catch (err) {
      if (!this.stopped) this.note(err);
      return;
    }
    const at = receivedAt();
    const t = this.target!;
    const v = a.version;
    if (v === null || a.packageUrl === null) return;
    if (this.switchFor !== null && this.switchFor !== v) this.cancelSwitch();
    if (v === t.current()) {
      this.status.prepared = null;
      return;
    }
    if (this.status.refused?.version === v) return; // reported: the mirror holds the rollout
    if (this.status.prepared !== v) {
      if (this.preparing === null && performance.now() >= this.retryAt) {
        this.preparing = this.prepare(a).finally(() => {
          this.preparing = null;
        });
      }
      return;
    }
    if (a.phase === 'switch' && a.activateInMs !== null && this.switchFor !== v) {
      const wait = Math.max(0, a.activateInMs - (performance.now() - at));
      this.switchFor = v;
      this.status.switchAt = new Date(Date.now() + wait).toISOString();
      this.switchTimer = setTimeout(() => {
        this.switching = this.switchNow(v).finally(() => {
          this.switching = null;
        });
      }, wait);
    }
  }

  private cancelSwitch(): void {
    if (this.switchTimer) clearTimeout(this.switchTimer);
    this.switchTimer = null;
    this.switchFor = null;
    this.status.switchAt = null;
  }

  private async prepare(a: FleetAnswer): Promise<void> {
    const v = a.version!;
    this.status.preparing = v;
    const t0 = performance.now();
    try {
      await installAnnounced(this.o, a, this.abort.signal);
      await this.target!.preload(v);
      this.o.onImport?.((performance.now() - t0) / 1000, 'ok');
      this.status.prepared = v;
      this.status.downloadError = null;
      if (this.status.refused?.version !== v) this.status.refused = null; // history once another version is ready
      this.retries = 0;
      this.retryAt = 0;
      this.o.log(`airlock serve: follow: ${v} is verified, imported and loaded; waiting for the mirror's switch time`);
    } catch (err) {
      if (this.stopped) return;
      this.o.onImport?.((performance.now() - t0) / 1000, 'failed');
      this.failed(v, err);
      if (!isRefusal(err)) return; // tried again after its backoff, at a later poll
    } finally {
      this.status.preparing = null;
    }
    this.soon();
  }

  private async switchNow(v: string): Promise<void> {
    this.switchTimer = null;
    if (this.stopped || this.switchFor !== v) return;
    const t = this.target!;
    const switched = (at: number) => {
      this.status.lastSwitch = { version: v, at: new Date(at).toISOString(), atMs: at };
      this.status.prepared = null;
      this.o.onSwitch?.(v, at);
    };
    // Swap first (the instant is what the fleet agreed on), then make it durable in the store.
    const swapped = t.adopt?.(v) ?? false;
    if (swapped) switched(Date.now());
    try {
      try {
        await activate(this.o.store, v);
      } finally {
        t.adopted?.(); // on failure the watcher goes back to what the store says
      }
      // A check already under way may have read the pointer before it changed: ask again (bounded).
      for (let i = 0; i < 5 && t.current() !== v; i++) await t.recheck();
      if (!swapped && t.current() === v) switched(Date.now());
    } catch (err) {
      this.o.log(`airlock serve: follow: switching to ${v} failed: ${message(err)}${swapped ? '; back to what the store names' : ''}`);
      if (swapped) await t.recheck();
    } finally {
      this.switchFor = null;
      this.status.switchAt = null;
    }
    this.soon();
  }
}
