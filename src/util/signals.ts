/**
 * Signals for long-running commands: they exit promptly on a signal and clean up after themselves.
 *
 * Once trapped, SIGINT, SIGTERM and SIGHUP never end the process with Node's default action (which
 * skips every `finally`): the first one aborts `signal`, and the command stops and cleans up; every
 * later one is only noted. A second SIGTERM 10 ms after the first (GNU `timeout`, a supervisor, an
 * impatient Ctrl-C) can therefore never cut a clean-up short. SIGKILL remains for whoever means it.
 * The handlers stay for the rest of the process's life: a window without them is a window in which
 * a signal kills mid-clean-up.
 */
export type TrappedSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';
const SIGNALS: readonly TrappedSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface SignalTrap {
  /** Aborted by the first SIGINT or SIGTERM (and SIGHUP, unless a hang-up handler is set). */
  readonly signal: AbortSignal;
  /** The signal that stopped the command, if any. */
  readonly received: TrappedSignal | null;
  /** SIGHUP calls `fn` instead of stopping (serve: re-read the active version); null: SIGHUP stops. */
  onHangup(fn: (() => void) | null): void;
  /** Remove the handlers (tests; a command never needs to). */
  dispose(): void;
}

export interface TrapOptions {
  /** Told once, at the first repeated signal, that the clean-up goes on (a log line on stderr). */
  notice?: (line: string) => void;
}

export function trapSignals(o: TrapOptions = {}): SignalTrap {
  const ac = new AbortController();
  let received: TrappedSignal | null = null;
  let hangup: (() => void) | null = null;
  let noticed = false;
  const handler = (sig: TrappedSignal) => {
    if (sig === 'SIGHUP' && hangup && !ac.signal.aborted) return hangup();
    if (!ac.signal.aborted) {
      received = sig;
      ac.abort(new Error(`interrupted by ${sig}`));
      return;
    }
    if (!noticed) {
      noticed = true;
      o.notice?.(`airlock: ${sig} received while stopping: finishing the clean-up first (further signals are ignored)`);
    }
  };
  for (const s of SIGNALS) process.on(s, handler);
  return {
    signal: ac.signal,
    get received() {
      return received;
    },
    onHangup(fn) {
      hangup = fn;
    },
    dispose() {
      for (const s of SIGNALS) process.off(s, handler);
    },
  };
}

/** Resolves when `signal` aborts (at once if it already has). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
