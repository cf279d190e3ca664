import { lstat, mkdir, readlink, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UsageError, outputExists } from '../errors.js';
import { kindOf, makeTempFolder, writeDurably } from '../util/fsx.js';
import { escapeControls, quoted } from '../util/terminal.js';
import { numeric, parse } from './args.js';
import { FLAG_RANGES } from '../values/settings.js';
import { log, out, type CliContext, type Command } from './context.js';
import { trapFor } from './interrupt.js';
import { listenError } from '../util/listen.js';
import { whenAborted } from '../util/signals.js';
import { describeFsError } from '../util/fs-words.js';

/**
 * `airlock emulate`: the service stand-in on a port until Ctrl-C. Its keys are random per run and
 * never printed (output redacts every svc_ key anyway): they are written to 0600 files in a
 * private temp folder whose paths are printed, ready for AIRLOCK_ADMIN_KEY_FILE.
 */
/** Agent jobs that exist from the start, so `airlock agent-job` can be tried at once. */
const DEMO_AGENT_JOBS = [
  { projectId: 'demo', id: 'agj_completes', outcome: 'completed' as const },
  { projectId: 'demo', id: 'agj_fails', outcome: 'failed' as const },
];

interface KeyFiles { adminFile: string; assistantFile: string; remove(): Promise<void> }

/**
 * The emulator's keys in 0600 files, each written whole and never over an existing file
 * (writeDurably, exclusive: a script waiting for admin.key never reads half a key, and a file of
 * the user's is never replaced). Into a private temp folder, or into `dir` (created 0700 when
 * missing; a link there is not followed). remove() takes away only what was written here.
 */
async function writeKeyFiles(dir: string | undefined, k: { admin: string; assistant: string }): Promise<KeyFiles> {
  let made: string | null = null;
  const bad = (why: string, errno?: string) => new UsageError(`--keys-dir ${escapeControls(dir ?? '')} ${why}`, { subject: '--keys-dir', ...(errno ? { errno } : {}) }, 'AIRLOCK_KEYS_DIR');
  if (dir === undefined) made = dir = await makeTempFolder('airlock-emulate-');
  else {
    const st = await lstat(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw bad(describeFsError(err), err.code);
    });
    if (st === null) {
      made = await mkdir(dir, { mode: 0o700 }).then(() => dir!, (err: NodeJS.ErrnoException) => {
        throw bad(err.code === 'ENOENT' ? 'cannot be made: its parent folder does not exist' : describeFsError(err, 'write'), err.code);
      });
    } else if (st.isSymbolicLink()) throw bad(`is a symbolic link (to ${quoted(await readlink(dir).catch(() => '?'))}), which is not followed; give the folder itself`);
    else if (!st.isDirectory()) throw bad(`is ${kindOf(st)}, not a folder`);
  }
  const adminFile = join(dir, 'admin.key');
  const assistantFile = join(dir, 'assistant.key');
  const written: string[] = [];
  const remove = async () => {
    if (made !== null) await rm(made, { recursive: true, force: true });
    else await Promise.all(written.map((f) => rm(f, { force: true })));
  };
  try {
    for (const [file, key] of [[assistantFile, k.assistant], [adminFile, k.admin]] as const) {
      if (await lstat(file).then(() => true, () => false)) throw outputExists(file, 'remove it or give another --keys-dir');
      await writeDurably(file, (fh) => fh.writeFile(key + '\n'), { mode: 0o600, exclusive: true });
      written.push(file);
    }
  } catch (err) {
    await remove();
    throw err;
  }
  return { adminFile, assistantFile, remove };
}

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
                    An existing admin.key or assistant.key there is never replaced (exit 2)

Exit codes: 0 stopped, 1 failure (e.g. the port is taken), 2 usage.`,
  async run(argv: string[], ctx: CliContext) {
    const { values, numbers } = parse(argv, { port: numeric(FLAG_RANGES.port), host: { type: 'string' }, 'keys-dir': { type: 'string' } }, false);
    const port = numbers.port ?? 0;
    const host = values.host ?? '127.0.0.1';
    const { startEmulator } = await import('../emulator/index.js');
    // From here no signal ends the process before the emulator is closed and its key folder gone.
    const trap = trapFor(ctx);
    const emu = await startEmulator({ port, host, agentJobMs: 2000, agentJobs: DEMO_AGENT_JOBS }).catch((err: unknown) => { throw listenError(err, host, port); });
    let keys: KeyFiles | null = null;
    try {
      keys = await writeKeyFiles(values['keys-dir'] === undefined ? undefined : resolve(ctx.cwd, values['keys-dir']), emu.keys);
      const { adminFile, assistantFile } = keys;
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
      await keys?.remove();
    }
    log(ctx, 'airlock emulate: stopped');
    return 0;
  },
};
export default command;
