import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashToken } from '../../src/mirror/index.js';
export { BIN } from '../helpers/bin.js';
import { BIN } from '../helpers/bin.js';

/** Shared by test/mirror and test/values: the compiled CLI, run or started as a server. */

export interface Ran { code: number | null; stdout: string; stderr: string }

/** Run the binary to completion (bounded). */
export function run(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 30_000): Promise<Ran> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

export interface Running { child: ChildProcess; url: string; stderr: () => string; exit: Promise<number | null>; stop(): Promise<number | null> }

/** Start `airlock serve ...` and wait (bounded) for the URL it prints on stdout. */
export function start(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 20_000, onStderr?: (all: string) => void): Promise<Running> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
    onStderr?.(err);
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exit;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no URL printed; stderr: ${err}`)); }, timeoutMs);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^(http:\/\/\S+)\n/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!.replace(/\/$/, ''), stderr: () => err, exit, stop });
      }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(Object.assign(new Error(`exited ${code} before listening: ${err}`), { code, stderr: err })); });
  });
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
