import { redact } from '../util/redact.js';

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

/** Print the command's result: JSON (one document) or prose lines, on stdout. */
export function printResult(ctx: CliContext, json: boolean, value: unknown, prose: () => string): void {
  if (json) ctx.stdout.write(redact(JSON.stringify(value, null, 2)) + '\n');
  else {
    const text = prose();
    if (text) ctx.stdout.write(redact(text.endsWith('\n') ? text : text + '\n'));
  }
}

/** A log line on stderr, secrets redacted. */
export function log(ctx: CliContext, line: string): void {
  ctx.stderr.write(redact(line) + '\n');
}
