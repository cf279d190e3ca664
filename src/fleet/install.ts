import { EXIT, toAirlockError } from '../errors.js';
import type { FleetAnswer } from '../mirror/index.js';
import { installBundle } from '../store/bundle-install.js';

/**
 * The version a mirror announces, downloaded into the follower's store, verified with the trust of
 * `airlock import` and imported unactivated, when its turn comes (a library's sites take turns).
 */
/** What installing needs of a follower's options. */
export interface InstallFrom {
  store: string;
  /** A library's site: the package must be of this domain. */
  site?: string;
  inTurn?: <T>(work: () => Promise<T>) => Promise<T>;
  trust: string[];
  allowUnsigned: boolean;
  log: (line: string) => void;
}

export async function installAnnounced(o: InstallFrom, a: FleetAnswer, signal: AbortSignal): Promise<void> {
  const inTurn = o.inTurn ?? (<T>(work: () => Promise<T>) => work());
  await inTurn(async () => {
    signal.throwIfAborted();
    await installBundle({
      url: a.packageUrl!,
      store: o.store,
      label: a.version!,
      labelFrom: 'the mirror announced it as',
      site: o.site,
      sha256: a.packageSha256 ?? undefined,
      trust: o.trust,
      allowUnsigned: o.allowUnsigned,
      activate: false,
      signal,
      log: (l) => o.log(l.replace(/^airlock serve: /, 'airlock serve: follow: ')),
      // Trust policy: a rollback on the mirror (the operator's decision) brings the fleet an older
      // version than a replica last imported; the replica follows it. Only the order rule is
      // waived (signatures, expiry and audience still hold), and each replica's audit log records it.
      allowDowngrade: ['AIRLOCK_DOWNGRADE'],
    });
  });
}

/**
 * A version the follower must not switch to, whatever it tries again: it failed verification, or
 * the store holds other content under its label (the fleet would serve two sites as one version).
 */
export function isRefusal(err: unknown): boolean {
  const e = toAirlockError(err);
  return e.exitCode === EXIT.VERIFICATION || e.code === 'AIRLOCK_VERSION_CONFLICT';
}

/** Waits `ms`, or less when `signal` aborts (its listener removed either way). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
