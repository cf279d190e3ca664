import { redact } from '../util/redact.js';
import { escapeControls, escapeJson } from '../util/terminal.js';

/**
 * What a command needs of the outside world, injected so commands stay testable:
 * stdout for the result (prose or one JSON document), stderr for logs and progress.
 */
export interface CliContext {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream | NodeJS.WritableStream;
  /** True when stderr is a TTY: progress bars then, plain lines otherwise. */
  interactive: boolean;
}

export function defaultContext(): CliContext {
  return {
    env: process.env,
    cwd: process.cwd(),
    stdout: process.stdout,
    stderr: process.stderr,
    interactive: Boolean(process.stderr.isTTY),
  };
}

/**
 * Everything a command prints goes through here (src/util/terminal.ts): secrets redacted, and
 * control characters escaped, so data (a manifest's domain, an archive path, a server's error)
 * can never drive the operator's terminal. JSON keeps its meaning (\u escapes); prose keeps its
 * own line breaks, and values interpolated with `shown` are escaped whole.
 */
export function printResult(ctx: CliContext, json: boolean, value: unknown, prose: () => string): void {
  if (json) ctx.stdout.write(jsonText(value) + '\n');
  else {
    const text = prose();
    if (text) out(ctx, text);
  }
}

/** One JSON document for stdout, escaped and redacted. */
export function jsonText(value: unknown, indent = 2): string {
  return redact(escapeJson(JSON.stringify(value, null, indent)));
}

/** Text on stdout (a URL, a block of instructions), escaped and redacted. */
export function out(ctx: CliContext, text: string): void {
  ctx.stdout.write(redact(escapeControls(text.endsWith('\n') ? text : text + '\n', { layout: true })));
}

/** A log line on stderr, escaped and redacted. */
export function log(ctx: CliContext, line: string): void {
  ctx.stderr.write(redact(escapeControls(line, { layout: true })) + '\n');
}

/** A command module: parse its own argv, call the library, print. One small file each. */
export interface Command {
  summary: string;
  usage: string;
  run(argv: string[], ctx: CliContext): Promise<number>;
}
