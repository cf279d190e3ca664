import { AirlockError, EXIT } from '../errors.js';
import { trapSignals, type SignalTrap } from '../util/signals.js';
import { log, type CliContext } from './context.js';

/**
 * The signal trap of a long-running command (serve, preview, emulate, demo, import, fetch), set
 * up before it creates anything it must clean up: from then on no SIGINT/SIGTERM/SIGHUP, however
 * many and however close together, ends the process before its clean-up ran.
 */
export function trapFor(ctx: CliContext): SignalTrap {
  return trapSignals({ notice: (line) => log(ctx, line) });
}

/**
 * What a command that does work (import, fetch) throws once it has stopped and cleaned up after a
 * signal: exit 1, saying what was left as it was. Servers exit 0 on a signal instead (their stop).
 */
export function interruptedError(trap: SignalTrap, what: string, cause?: unknown): AirlockError {
  return new AirlockError('AIRLOCK_INTERRUPTED', `interrupted by ${trap.received ?? 'a signal'}; ${what}`, EXIT.FAILURE, { subject: trap.received ?? 'signal' }, { cause });
}
