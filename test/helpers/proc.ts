/**
 * A long-running `airlock` command (serve, preview, emulate, demo, import, fetch) as a child
 * process of the built binary: wait (bounded) for a line on stdout, send signals, await the exit.
 * Its TMPDIR is a private folder, so "nothing left behind" is checked without other tests' noise.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from './bin.js';

export interface Proc {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `re` on stdout (rejects after `timeoutMs` or on exit). */
  /** The first match of `re` in what the process printed on stdout (or `from` stderr) so far or later. */
  waitFor(re: RegExp, timeoutMs?: number, from?: 'stdout' | 'stderr'): Promise<RegExpExecArray>;
  /** Exit code and signal; the child is SIGKILLed after `timeoutMs` (then `signal` is SIGKILL). */
  exit(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(sig: NodeJS.Signals): void;
}

export function startAirlock(args: string[], o: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Proc {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: o.cwd, env: { ...process.env, AIRLOCK_STORE: undefined, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })));
  let done = false;
  void exited.then(() => (done = true));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor(re, timeoutMs = 20_000, from = 'stdout') {
      return new Promise((resolve, reject) => {
        const deadline = Date.now() + timeoutMs;
        const poll = () => {
          const m = re.exec(from === 'stdout' ? out : err);
          if (m) return resolve(m);
          if (done) return reject(new Error(`exited before printing ${re}; stderr:\n${err}`));
          if (Date.now() > deadline) return reject(new Error(`nothing matching ${re} in ${timeoutMs} ms; stderr:\n${err}`));
          setTimeout(poll, 10);
        };
        poll();
      });
    },
    async exit(timeoutMs = 20_000) {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
    kill(sig) {
      if (!done) child.kill(sig);
    },
  };
}

/** A private TMPDIR for one child, and what it holds afterwards (must be nothing). */
export async function privateTmp(): Promise<{ dir: string; litter(): Promise<string[]>; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-tmpdir-'));
  return {
    dir,
    litter: async () => (await readdir(dir, { recursive: true })).map(String).sort(),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A port on 127.0.0.1 held by someone else (for listen errors); `release` lets it go. */
export async function occupiedPort(): Promise<{ port: number; release(): Promise<void> }> {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  return { port: (blocker.address() as { port: number }).port, release: () => new Promise<void>((r) => blocker.close(() => r())) };
}
