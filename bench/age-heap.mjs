/**
 * Preloaded into the two servers bench/library.ts compares (`node --expose-gc --import` this file;
 * nothing of airlock changes). On SIGUSR2: 30 full garbage collections, 50 ms apart, then
 * "airlock-bench: aged" on stdout, which the benchmark waits for: the collections a server that
 * has been up for a while has been through.
 *
 * Why: a server's cost per request can depend on the collections it went through. V8 forgets the
 * shape of an object at a full collection that finds none alive, and the code that builds such
 * objects on every request can then fall back to V8's generic path for good (Node's own
 * `process.nextTick` entries did so, 10-35 % fewer requests a second, until airlock's servers
 * began holding one: holdTickShape in src/util/gc.ts). A library opening its sites runs several
 * collections; the store alone, just started, has run none. Aged, both are in the state a
 * long-running server stays in, so a difference of that kind is not counted against either.
 */
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';

process.on('SIGUSR2', () => {
  let left = 30;
  const timer = setInterval(() => {
    globalThis.gc();
    if (--left > 0) return;
    clearInterval(timer);
    process.stdout.write('airlock-bench: aged\n');
  }, 50);
});
