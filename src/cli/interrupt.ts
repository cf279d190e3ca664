import { AirlockError, EXIT } from '../errors.js';
import { trapSignals, type SignalTrap } from '../util/signals.js';
import { defaultContext, jsonText, log, type CliContext } from './context.js';

/** Servers: a signal is their normal stop (exit 0), as their --help says. */
const SERVERS = new Set(['serve', 'preview', 'emulate', 'demo']);
/** Commands that only read: a signal at any moment changes nothing. Every other command takes its trap over (trapFor, stopOrFinish). */
const READ_ONLY = new Set(['inspect', 'verify', 'list', 'audit', 'agent-job']);

/** The process's one trap, set by the binary before anything else loads (`trapFromStart`). */
let processTrap: SignalTrap | null = null;
/** The running command took the trap over (trapFor): it stops and cleans up itself. */
let adopted = false;
/** The command's `run` has begun (before: only modules were loading). */
let running = false;

/**
 * The binary's first act (bin.ts): SIGINT/SIGTERM/SIGHUP are trapped from the first instruction.
 * Until the command takes the trap over (trapFor), a signal ends the process at once with a line
 * saying what was interrupted and what that left: nothing, before the command started or for a
 * command that only reads. Exit 1 (AIRLOCK_INTERRUPTED); a server stops with 0.
 */
export function trapFromStart(command: string | undefined, o: { json?: boolean } = {}, ctx: CliContext = defaultContext()): void {
  const trap = trapSignals({ notice: (line) => log(ctx, line) });
  processTrap = trap;
  trap.signal.addEventListener('abort', () => {
    if (adopted) return;
    const name = command && /^[a-z-]{1,20}$/.test(command) ? `airlock ${command}` : 'airlock';
    const server = SERVERS.has(command ?? '');
    if (server) log(ctx, `${name}: stopped by ${trap.received}${running ? '' : ' before it started; nothing was changed'}`);
    else {
      const left = !running
        ? 'before it started; nothing was changed'
        : READ_ONLY.has(command ?? '')
          ? 'it only reads: nothing was changed'
          : 'nothing was changed';
      const err = interruptedError(trap, left);
      // A script that asked for --json gets its one document, as for any other failure.
      if (o.json) ctx.stdout.write(jsonText({ ok: false, ...err.toJSON() }, 0) + '\n');
      log(ctx, `${name}: error: ${err.message} [${err.code}]`);
    }
    process.exit(server ? EXIT.OK : EXIT.FAILURE);
  });
}

/** main: the command's own code runs from now on (its modules are loaded). */
export function commandStarted(): void {
  running = true;
}

/**
 * The signal trap of a long-running command (serve, preview, emulate, demo, import, fetch, delta),
 * taken over before it creates anything it must clean up: from then on no SIGINT/SIGTERM/SIGHUP,
 * however many and however close together, ends the process before its clean-up ran. In the
 * binary this is the trap set at start; in-process (tests) a new one.
 */
export function trapFor(ctx: CliContext): SignalTrap {
  if (processTrap && !adopted) {
    adopted = true;
    return processTrap;
  }
  return trapSignals({ notice: (line) => log(ctx, line) });
}

/**
 * What a command that does work (import, fetch) throws once it has stopped and cleaned up after a
 * signal: exit 1, saying what was left as it was. Servers exit 0 on a signal instead (their stop).
 */
export function interruptedError(trap: SignalTrap, what: string, cause?: unknown): AirlockError {
  return new AirlockError(
    'AIRLOCK_INTERRUPTED',
    `interrupted by ${trap.received ?? 'a signal'}; ${what}`,
    EXIT.FAILURE,
    { subject: trap.received ?? 'signal' },
    { cause },
  );
}

/**
 * A call of the export API stopped by the signal (its own words are AIRLOCK_ABORTED): the command
 * was interrupted, and a re-run continues. Any other error (the download's and the poll's own
 * interruptions say more) is returned as it is.
 */
export function interruptedCall(trap: SignalTrap, err: unknown): unknown {
  if (trap.signal.aborted && err instanceof AirlockError && err.code === 'AIRLOCK_ABORTED') {
    return interruptedError(trap, `${err.message}; run the same command again to continue`, err);
  }
  return err;
}
