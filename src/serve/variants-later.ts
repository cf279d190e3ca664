import { buildVariants } from '../store/variants/build.js';
import type { VariantSizes } from './source.js';
import { turns } from '../util/turns.js';

/**
 * Precompression (br, gzip) of the assets a stored version has no variants for yet, done by the
 * server in the background instead of holding `airlock import`. Until an asset's variants are
 * durable the sender compresses it on request, with the same levels (send-file.ts sendDynamic);
 * then its variant files are served and negotiated like any other.
 * Starts after `after` (the version's HTML, which readers wait for, goes first) and, for a
 * starting server, once it listens. A store the server cannot write into keeps serving identity.
 */
/**
 * Tests only: awaited before a version's build starts, so a test can hold the build and look at
 * the server in the window before any variant exists, without racing the clock.
 */
export const variantsLaterHooks: { beforeBuild: ((label: string) => Promise<void>) | null } = { beforeBuild: null };

export interface Later {
  done: Promise<unknown>;
  stop: () => Promise<void>;
  release: () => void;
}

export interface VariantsLaterOptions {
  store: string;
  label: string;
  exclude: (path: string) => boolean;
  attach: (sha256: string, sizes: VariantSizes) => void;
  after: Promise<unknown>;
  held: boolean;
  log: (line: string) => void;
  poolSize?: number;
  /** Runs the build when its turn comes (a library: one site's at a time, not 500 at once); default: at once. */
  inTurn?: InTurn;
}

/** Runs `job` when its turn comes; resolves or rejects as it does. */
export type InTurn = (job: () => Promise<void>) => Promise<void>;

/** An InTurn that runs one job at a time, in the order given (a failed job does not stop the next). */
export function oneAtATime(): InTurn {
  return turns(1);
}

export function variantsLater(o: VariantsLaterOptions): Later {
  const ac = new AbortController();
  let started = false;
  let release!: () => void;
  const released = o.held ? new Promise<void>((r) => (release = r)) : Promise.resolve();
  if (!o.held) release = () => {};
  const done = (async () => {
    await Promise.all([released, o.after.catch(() => {})]);
    const hook = variantsLaterHooks.beforeBuild;
    if (hook !== null && !ac.signal.aborted) {
      const aborted = new Promise<void>((r) => ac.signal.addEventListener('abort', () => r(), { once: true }));
      await Promise.race([hook(o.label), aborted]);
    }
    const build = async () => {
      if (ac.signal.aborted) return; // stopped while waiting for its turn
      started = true;
      const t0 = Date.now();
      const r = await buildVariants(o.store, o.label, { exclude: o.exclude, onVariant: o.attach, signal: ac.signal, leased: true, poolSize: o.poolSize });
      if (r.candidates > 0) {
        o.log(
          `airlock serve: precompressed ${r.candidates} asset(s) of ${o.label} in ${((Date.now() - t0) / 1000).toFixed(1)} s` +
            (r.failed.length ? `; ${r.failed.length} failed (served uncompressed): ${r.failed.slice(0, 3).join('; ')}` : ''),
        );
      }
    };
    await (o.inTurn ?? ((job) => job()))(build);
  })().catch((err: unknown) => {
    if (ac.signal.aborted) return;
    const code = (err as NodeJS.ErrnoException).code;
    o.log(
      `airlock serve: cannot precompress the assets of ${o.label}` +
        (code ? ` (${code})` : '') +
        `: ${err instanceof Error ? err.message : String(err)}; they are served uncompressed`,
    );
  });
  return {
    done,
    release: () => release(),
    stop: async () => {
      ac.abort();
      release();
      // A build waiting for its turn (behind another site's) is dropped, not waited for.
      if (started) await done;
    },
  };
}
