import { resolve } from 'node:path';
import { numeric, parse } from './args.js';
import { FLAG_RANGES } from '../values/settings.js';
import { log, out, type CliContext, type Command } from './context.js';
import { trapFor } from './interrupt.js';
import { refuseInStore } from './out-file.js';
import { whenAborted } from '../util/signals.js';

const command: Command = {
  summary: "run a local stand-in of the service's API over the built-in fixture sites",
  usage: `usage: airlock emulate [--port N] [--host H] [--keys-dir DIR]

Serves the export, assistant, search and agent-job APIs on http://H:N (default 127.0.0.1, a free
port) over the committed fixture site (domain docs.example.com). The accepted keys (random per
run) are written to admin.key and assistant.key (mode 0600) in a private temp folder, or in
--keys-dir; point AIRLOCK_ADMIN_KEY_FILE at admin.key. Two agent jobs of project "demo" exist from
the start: agj_completes (completed after 2 s, with a prLink) and agj_fails (failed after 2 s).
Ctrl-C (SIGINT, SIGTERM, SIGHUP) stops it and removes the key files.

  --port N          port to listen on (default: a free one)
  --host H          address to listen on (default 127.0.0.1; the emulator is for local use)
  --keys-dir DIR    write the key files here (created, mode 0700, when missing; its parent must
                    exist), so scripts know their path; they appear once the emulator listens.
                    An existing admin.key or assistant.key there is never replaced, and a folder
                    inside an airlock store is refused (exit 2)

Exit codes: 0 stopped, 1 failure (e.g. the port is taken), 2 usage.`,
  async run(argv: string[], ctx: CliContext) {
    const { values, numbers } = parse(argv, { port: numeric(FLAG_RANGES.port), host: { type: 'string' }, 'keys-dir': { type: 'string' } }, false);
    const port = numbers.port ?? 0;
    const host = values.host ?? '127.0.0.1';
    const keysDir = values['keys-dir'] === undefined ? undefined : resolve(ctx.cwd, values['keys-dir']);
    if (keysDir !== undefined) await refuseInStore(keysDir, '--keys-dir', 'folder'); // secrets never land among a store's files
    const { startLocalEmulator } = await import('../emulator/local.js');
    // From here no signal ends the process before the emulator is closed and its key folder gone.
    const trap = trapFor(ctx);
    const emu = await startLocalEmulator({ port, host, ...(keysDir === undefined ? {} : { keysDir }) });
    try {
      const { adminFile, assistantFile } = emu;
      if (!['127.0.0.1', '::1', 'localhost'].includes(host)) log(ctx, `airlock emulate: warning: listening on ${host}; the emulator is for local use`);
      if (!trap.signal.aborted) {
        out(
          ctx,
          [
            `airlock emulate: listening on ${emu.url}`,
            `domains: docs.example.com`,
            `admin key file:     ${adminFile}`,
            `assistant key file: ${assistantFile}`,
            '',
            'try:',
            `  export AIRLOCK_API_URL=${emu.url}`,
            `  export AIRLOCK_ADMIN_KEY_FILE=${adminFile}`,
            '  airlock fetch --domain docs.example.com',
            '  airlock agent-job demo agj_completes --wait',
            '',
          ].join('\n'),
        );
      }
      await whenAborted(trap.signal);
    } finally {
      await emu.close();
    }
    log(ctx, 'airlock emulate: stopped');
    return 0;
  },
};
export default command;
