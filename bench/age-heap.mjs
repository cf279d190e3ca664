/**
 * Preloaded into the two servers bench/library.ts compares (`node --expose-gc --import` this file;
 * nothing of airlock changes). On SIGUSR2: 30 full garbage collections, 50 ms apart, then
 * "airlock-bench: aged" on stdout, which the benchmark waits for: the collections a server that
 * has been up for a while has been through.
 *
 * Why: after enough full collections, V8 gives up specialising some of Node's own hot paths (the
 * object `process.nextTick` builds for each callback is then made by the slow, generic path), and a
 * server answers 10-35 % fewer requests a second, whatever it serves. A library opening its sites
 * runs several collections; the store alone, just started, has run none. Compared as started, the
 * benchmark would measure that difference, not what the library costs. Aged, both are in the state
 * a long-running server stays in.
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
