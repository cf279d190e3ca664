import { log, type CliContext } from './context.js';
import { interruptedError, trapFor } from './interrupt.js';
import type { SignalTrap } from '../util/signals.js';

/** What stopOrFinish hands the work: the trap's signal, and a lock wait that says whom it waits for (the store lock's options). */
export interface StopAt {
  signal: AbortSignal;
  onWait: (holderPid: number) => void;
}

/**
 * How a command that writes something small or in one step (sign, pack, keygen, activate, rollback,
 * trust, receipt) meets a signal. It takes the trap over for its whole run, so a signal never ends
 * it half-way, and `work` gets the trap's signal, which it honours only where stopping changes
 * nothing: waiting for the store lock, reading and writing a file not yet given its name
 * (writeDurably's `signal`). A signal there: the work stops and cleans up, and the command says
 * `untouched` (exit 1, AIRLOCK_INTERRUPTED). A signal once the change is under way comes too late
 * to stop it: the command finishes, reports as usual (exit 0) and says the signal came after.
 */
export async function stopOrFinish<T>(ctx: CliContext, command: string, untouched: string, work: (stop: StopAt) => Promise<T>): Promise<T> {
  const trap = trapFor(ctx);
  let result: T;
  try {
    result = await work({ signal: trap.signal, onWait: (pid) => log(ctx, `airlock ${command}: waiting for the store lock held by process ${pid}`) });
  } catch (err) {
    throw trap.signal.aborted ? interruptedError(trap, untouched, err) : err;
  }
  finishedAfter(ctx, command, trap);
  return result;
}

/** A command that finished although a signal came (too late to stop its change) says so. */
export function finishedAfter(ctx: CliContext, command: string, trap: SignalTrap): void {
  if (trap.received) log(ctx, `airlock ${command}: ${trap.received} arrived once the change was under way: finished it (exit 0)`);
}
