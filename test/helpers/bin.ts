/**
 * The one place the tests start the built binary (`dist/src/cli/bin.js`, built by `npm test`'s
 * pretest), as a user would, always with a time limit:
 * - `airlock` runs it to completion synchronously, `airlockAsync` asynchronously;
 * - `startAirlock` starts a long-running command (serve, preview, emulate, demo, import, fetch):
 *   wait (bounded) for a line, send signals, await the exit;
 * - `startServer` starts one that must print its URL, and resolves once it has;
 * - `stopAll` (for an afterEach) ends whatever `startAirlock`/`startServer` started and is still running.
 * AIRLOCK_STORE of the caller is never passed on unless `env` sets it.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns, type StdioOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { until, Stop } from './wait.js';

export const BIN = fileURLToPath(new URL('../../dist/src/cli/bin.js', import.meta.url));

export interface RunResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Options shared by every launcher: `nodeArgs` go before the binary (e.g. `--import preload`);
 * `bareEnv` gives the child only PATH and `env` instead of this process's environment.
 */
export interface LaunchOptions {
  env?: NodeJS.ProcessEnv;
  bareEnv?: boolean;
  cwd?: string;
  uid?: number;
  gid?: number;
  nodeArgs?: string[];
}

const argv = (args: string[], o: LaunchOptions) => [...(o.nodeArgs ?? []), BIN, ...args];
const envOf = (o: LaunchOptions): NodeJS.ProcessEnv =>
  o.bareEnv ? { PATH: process.env.PATH, ...o.env } : { ...process.env, AIRLOCK_STORE: undefined, ...o.env };

export function airlock(args: string[], o: LaunchOptions & { timeoutMs?: number; input?: string } = {}): RunResult {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, argv(args, o), {
    encoding: 'utf8',
    timeout: o.timeoutMs ?? 30_000,
    cwd: o.cwd,
    input: o.input,
    uid: o.uid,
    gid: o.gid,
    env: envOf(o),
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** `stdin: 'ignore'` gives the child /dev/null instead of an open pipe nobody writes to; `during` may poke the running child. */
export function airlockAsync(
  args: string[],
  o: LaunchOptions & { timeoutMs?: number; stdin?: 'pipe' | 'ignore'; during?: (child: ChildProcess) => void } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, argv(args, o), { cwd: o.cwd, env: envOf(o), uid: o.uid, gid: o.gid, stdio: [o.stdin ?? 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => c.kill('SIGKILL'), o.timeoutMs ?? 30_000);
    c.stdout!.on('data', (d) => (stdout += d));
    c.stderr!.on('data', (d) => (stderr += d));
    o.during?.(c);
    c.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

export interface Proc {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The first match of `re` in what the process printed on stdout (or `from` stderr) so far or later; rejects after `timeoutMs` or on exit. */
  waitFor(re: RegExp, timeoutMs?: number, from?: 'stdout' | 'stderr'): Promise<RegExpExecArray>;
  /** Exit code and signal; the child is SIGKILLed after `timeoutMs` (then `signal` is SIGKILL). */
  exit(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(sig: NodeJS.Signals): void;
  /** Whether the process has exited. */
  done(): boolean;
  /** Exit code and signal once its output streams closed too (all it printed is in stdout()/stderr()); no time limit of its own. */
  closed(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started = new Set<Proc>();

export function startAirlock(args: string[], o: LaunchOptions & { stdio?: StdioOptions; onStderr?: (all: string) => void } = {}): Proc {
  const child = spawn(process.execPath, argv(args, o), { cwd: o.cwd, env: envOf(o), uid: o.uid, gid: o.gid, stdio: o.stdio ?? ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
    o.onStderr?.(err);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  const p: Proc = {
    closed: () => closed,
    child,
    stdout: () => out,
    stderr: () => err,
    done: () => done,
    waitFor(re, timeoutMs = 20_000, from = 'stdout') {
      return until(
        () => {
          const m = re.exec(from === 'stdout' ? out : err);
          if (m) return m;
          if (done) throw new Stop(`exited before printing ${re}; stderr:\n${err}`);
          return undefined;
        },
        { timeoutMs, intervalMs: 10, what: () => `something matching ${re} (stderr:\n${err})` },
      );
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
  started.add(p);
  void exited.then(() => {
    done = true;
    started.delete(p);
  });
  return p;
}

/** SIGTERM (then, after `timeoutMs`, SIGKILL) to every started process still running, and await their exits. */
export async function stopAll(timeoutMs = 10_000): Promise<void> {
  await Promise.all(
    [...started].map((p) => {
      p.kill('SIGTERM');
      return p.exit(timeoutMs);
    }),
  );
}

export interface Server extends Proc {
  /** The URL it printed, without the trailing slash. */
  url: string;
  /** SIGTERM unless it has exited, then its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Start a server (`serve`, `preview`, `emulate`, `mirror`…) and resolve once it printed a URL
 * line (`ready`, by default `http://…` alone on a line) on stdout, within `timeoutMs`. If it exits
 * first, the error carries its `code` and `stderr`; if it stays silent, it is SIGKILLed.
 */
export async function startServer(
  args: string[],
  o: LaunchOptions & { timeoutMs?: number; ready?: RegExp; onStderr?: (all: string) => void } = {},
): Promise<Server> {
  const p = startAirlock(args, o);
  try {
    const m = await p.waitFor(o.ready ?? /^(http:\/\/\S+)\n/m, o.timeoutMs ?? 20_000);
    return Object.assign(p, {
      url: (m[1] ?? m[0]).replace(/\/$/, ''),
      stop: async () => {
        p.kill('SIGTERM');
        return (await p.exit()).code;
      },
    });
  } catch (e) {
    if (p.done()) {
      const { code } = await p.exit();
      throw Object.assign(new Error(`exited ${code} before listening: ${p.stderr()}`), { code, stderr: p.stderr() });
    }
    p.kill('SIGKILL');
    throw new Error(`no URL printed; stderr: ${p.stderr()}`, { cause: e });
  }
}

/**
 * Options that run a child as user nobody when the tests run as root (root ignores file modes, so
 * a permission test would prove nothing). The runtime itself must then be reachable by nobody: when
 * it is not (a Node installed under /root), this says so plainly instead of a spawn EACCES.
 */
export function asNobody(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const r = spawnSync(process.execPath, ['-e', ''], { uid: 65534, gid: 65534, cwd: '/', timeout: 15_000 });
  if (r.error || r.status !== 0) {
    throw new Error(`user nobody cannot run ${process.execPath} (${r.error?.message ?? `exit ${r.status}`}): install the runtime where every user may read it`);
  }
  return { uid: 65534, gid: 65534 };
}
