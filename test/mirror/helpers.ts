import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashToken } from '../../src/mirror/index.js';
import { airlockAsync, startServer, type Server } from '../helpers/bin.js';
export { BIN } from '../helpers/bin.js';

/** Shared by test/mirror and test/values: the compiled CLI, run or started as a server (test/helpers/bin.ts). */

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the binary to completion (bounded). */
export async function run(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 30_000): Promise<Ran> {
  const r = await airlockAsync(args, { env, timeoutMs, stdin: 'ignore' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export type Running = Server;

/** Start `airlock serve ...` and wait (bounded) for the URL it prints on stdout. */
export function start(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 20_000, onStderr?: (all: string) => void): Promise<Running> {
  return startServer(args, { env, timeoutMs, onStderr });
}

export async function tempDir(prefix: string): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A tokens file allowing `tokens` (stored as hashes, as documented). */
export async function tokensFile(path: string, tokens: string[]): Promise<string> {
  await writeFile(path, ['# mirror admin tokens', ...tokens.map(hashToken), ''].join('\n'));
  return path;
}
