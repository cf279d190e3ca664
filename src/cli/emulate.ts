import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseIntFlag } from './args.js';
import { log, type CliContext } from './context.js';
import type { Command } from './main.js';

/**
 * `airlock emulate`: the service stand-in on a port until Ctrl-C. Its keys are random per run and
 * never printed (output redacts every svc_ key anyway): they are written to 0600 files in a
 * private temp folder whose paths are printed, ready for AIRLOCK_ADMIN_KEY_FILE.
 */
const command: Command = {
  summary: "run a local stand-in of the service's API over the built-in fixture sites",
  usage: `usage: airlock emulate [--port N] [--host H]

Serves the export, assistant, search and agent-job APIs on http://H:N (default 127.0.0.1, a free
port) over the committed fixture site (domain docs.example.com). The accepted keys are written to
files in a private temp folder; point AIRLOCK_ADMIN_KEY_FILE at the admin key file. Ctrl-C stops.`,
  async run(argv: string[], ctx: CliContext) {
    const { values } = parse(argv, { port: { type: 'string' }, host: { type: 'string' } }, false);
    const port = parseIntFlag(values.port, '--port', 0, 65535) ?? 0;
    const host = values.host ?? '127.0.0.1';
    const { startEmulator } = await import('../emulator/index.js');
    const emu = await startEmulator({ port, host });
    const dir = await mkdtemp(join(tmpdir(), 'airlock-emulate-'));
    const adminFile = join(dir, 'admin.key');
    const assistantFile = join(dir, 'assistant.key');
    await writeFile(adminFile, emu.keys.admin + '\n', { mode: 0o600 });
    await writeFile(assistantFile, emu.keys.assistant + '\n', { mode: 0o600 });
    if (!['127.0.0.1', '::1', 'localhost'].includes(host)) log(ctx, `airlock emulate: warning: listening on ${host}; the emulator is for local use`);
    ctx.stdout.write(
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
        '',
      ].join('\n'),
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await emu.close();
    await rm(dir, { recursive: true, force: true });
    log(ctx, 'airlock emulate: stopped');
    return 0;
  },
};
export default command;
