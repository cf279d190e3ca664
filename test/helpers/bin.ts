/**
 * Run the built binary (`dist/src/cli/bin.js`, built by `npm test`'s pretest) as a user would,
 * with a time limit, and return its exit code and output.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../dist/src/cli/bin.js', import.meta.url));

export interface RunResult { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

export function airlock(args: string[], o: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; input?: string } = {}): RunResult {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8', timeout: o.timeoutMs ?? 30_000, cwd: o.cwd, input: o.input,
    env: { ...process.env, AIRLOCK_STORE: undefined, ...o.env },
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

export function airlockAsync(args: string[], o: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; uid?: number; gid?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BIN, ...args], { cwd: o.cwd, env: { ...process.env, AIRLOCK_STORE: undefined, ...o.env }, uid: o.uid, gid: o.gid });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => c.kill('SIGKILL'), o.timeoutMs ?? 30_000);
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (status, signal) => { clearTimeout(timer); resolve({ status, signal, stdout, stderr }); });
  });
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
