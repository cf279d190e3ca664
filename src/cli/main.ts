import { readFileSync } from 'node:fs';
import { ArgvError, EXIT, UsageError, toAirlockError } from '../errors.js';
import { nearest } from '../util/nearest.js';
import { commandStarted } from './interrupt.js';
import { defaultContext, jsonText, log, type CliContext, type Command } from './context.js';

export type { Command } from './context.js';

/** Lazy so that `airlock list` does not load the HTTP server, and start-up stays fast. */
export const COMMANDS: Record<string, () => Promise<{ default: Command }>> = {
  fetch: () => import('./fetch.js'),
  keygen: () => import('./keygen.js'),
  sign: () => import('./sign.js'),
  trust: () => import('./trust.js'),
  audit: () => import('./audit.js'),
  inspect: () => import('./inspect.js'),
  verify: () => import('./verify.js'),
  import: () => import('./import.js'),
  list: () => import('./list.js'),
  activate: () => import('./activate.js'),
  rollback: () => import('./rollback.js'),
  prune: () => import('./prune.js'),
  serve: () => import('./serve.js'),
  preview: () => import('./preview.js'),
  pack: () => import('./pack.js'),
  delta: () => import('./delta.js'),
  receipt: () => import('./receipt.js'),
  emulate: () => import('./emulate.js'),
  demo: () => import('./demo.js'),
  'agent-job': () => import('./agent-job.js'),
};

export function toolVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function usage(): Promise<string> {
  const lines = ['usage: airlock <command> [options]', '', 'commands:'];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const summary = await load().then(
      (m) => m.default.summary,
      () => '(not available)',
    );
    lines.push(`  ${name.padEnd(9)} ${summary}`);
  }
  lines.push('', 'airlock <command> --help for its options; airlock --version for the tool version.');
  lines.push('Ctrl-C (SIGINT) or SIGTERM, once Node.js has started (a tenth of a second or so; before that a signal');
  lines.push('ends the process as any program, 130 or 143 in the shell, with nothing done): the command says what it');
  lines.push('interrupted and what that left, and exits 1 (AIRLOCK_INTERRUPTED); the servers (serve, preview,');
  lines.push('emulate, demo) stop with 0.');
  lines.push('A command whose one change is already under way (a package taking its name) finishes it and exits 0.');
  return lines.join('\n') + '\n';
}

export { nearest };

export async function main(argv: string[], ctx: CliContext = defaultContext()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    ctx.stdout.write(toolVersion() + '\n');
    return EXIT.OK;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    (name ? ctx.stdout : ctx.stderr).write(await usage());
    return name ? EXIT.OK : EXIT.USAGE;
  }
  const load = COMMANDS[name];
  if (!load) {
    const near = nearest(name, Object.keys(COMMANDS));
    log(ctx, `airlock: unknown command ${JSON.stringify(name)} [AIRLOCK_USAGE]${near ? `; did you mean "${near}"?` : ''}`);
    ctx.stderr.write(await usage());
    return EXIT.USAGE;
  }
  const cmd = (await load()).default;
  if (rest.includes('--help') || rest.includes('-h')) {
    ctx.stdout.write(cmd.usage.endsWith('\n') ? cmd.usage : cmd.usage + '\n');
    return EXIT.OK;
  }
  try {
    // Secrets are never accepted as command-line values: they show in ps; they come from the environment only.
    if (rest.some((a) => /svc_[A-Za-z0-9_-]{4,}/.test(a))) {
      throw new UsageError('API keys are never accepted on the command line (they would show in ps); use AIRLOCK_ADMIN_KEY or AIRLOCK_ADMIN_KEY_FILE', {
        subject: 'argv',
      });
    }
    commandStarted();
    return await cmd.run(rest, ctx);
  } catch (err) {
    const e = toAirlockError(err instanceof ArgvError ? err.forCommand(name) : err);
    const json = rest.includes('--json');
    if (json) ctx.stdout.write(jsonText({ ok: false, ...e.toJSON() }, 0) + '\n');
    log(ctx, `airlock ${name}: error: ${e.message}${e.code === 'AIRLOCK_INTERNAL' ? '' : ` [${e.code}]`}`);
    if (e.code === 'AIRLOCK_INTERNAL' && ctx.env.AIRLOCK_DEBUG && err instanceof Error && err.stack) log(ctx, err.stack);
    return e.exitCode;
  }
}
