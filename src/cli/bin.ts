#!/usr/bin/env node
import { trapFromStart } from './interrupt.js';

// Signals are trapped before anything else loads: a Ctrl-C once this line runs says what it
// interrupted (nothing yet) and exits with the documented code, never a bare "killed by SIGINT".
trapFromStart(process.argv[2], { json: process.argv.includes('--json') });
const { EXIT } = await import('../errors.js');
const { redact } = await import('../util/redact.js');
const { main } = await import('./main.js');
const { smallYoungGeneration } = await import('../util/gc.js');

/**
 * Every command has cleaned up by the time `main` settles (servers closed, leases released, temp
 * folders removed). Then flush stdout/stderr and exit at once with the command's code: a natural
 * exit first tears down the signal handlers (Node's defaults return for a few milliseconds), so a
 * late signal of a storm would turn a clean exit 0 into "killed by SIGTERM"; and a handle left
 * open by mistake must never keep a finished command alive.
 */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    stream.write('', () => resolve());
  });
}

function done(code: number): void {
  process.exitCode = code;
  // Only once both are flushed: a slow reader of a large --json document must get all of it.
  void Promise.all([flushed(process.stdout), flushed(process.stderr)]).then(() => process.exit(code));
}

/** Commands that stream a package or an archive through the process (util/gc.ts). */
const BULK = new Set(['fetch', 'pack', 'verify', 'import', 'delta']);
if (BULK.has(process.argv[2] ?? '')) smallYoungGeneration();

main(process.argv.slice(2)).then(done, (err: unknown) => {
  process.stderr.write(redact(String(err)) + '\n');
  done(EXIT.FAILURE);
});
