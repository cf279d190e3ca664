/**
 * A signal that aborts after `ms` with a TimeoutError, as AbortSignal.timeout's does, but whose
 * timer holds it strongly. AbortSignal.timeout's signal is held only weakly, and inside
 * AbortSignal.any([...]) nothing else holds it: a garbage collection during a long body read
 * dropped it, and the deadline never came (a server trickling a byte a second kept a command
 * running past its documented bound). The timer is unref'd: it never keeps a process alive.
 */
export function timeoutSignal(ms: number): AbortSignal {
  const ac = new AbortController();
  setTimeout(() => ac.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms).unref();
  return ac.signal;
}
