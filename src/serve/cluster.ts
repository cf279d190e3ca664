import cluster, { type Worker } from 'node:cluster';
import { whenAborted, type SignalTrap } from '../util/signals.js';

/**
 * `--workers N`: the primary forks N workers that each run the whole server on the shared port
 * (node:cluster hands out connections). Every worker watches the store itself, so all switch
 * within the same 1 s. SIGHUP is forwarded; the first SIGTERM/SIGINT is forwarded as SIGTERM and
 * the primary exits 0 once every worker has finished its in-flight requests and exited.
 * A worker that dies after it served is replaced; one that dies before it ever listened (port
 * taken, bad host, a version that does not load) would only die again: everything stops, exit 1.
 */
export interface PrimaryOptions {
  workers: number;
  trap: SignalTrap;
  log: (line: string) => void;
  onUrl: (url: string) => void;
}

export function runPrimary(o: PrimaryOptions): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    let code = 0;
    let printed = false;
    const ready = new WeakSet<Worker>();
    const alive = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const forward = (sig: NodeJS.Signals) => {
      for (const w of alive()) w.process.kill(sig);
    };
    const stop = () => {
      if (stopping) return;
      stopping = true;
      forward('SIGTERM');
      if (alive().length === 0) resolve(code);
    };
    cluster.on('message', (w, msg: { airlockUrl?: string }) => {
      if (typeof msg?.airlockUrl !== 'string') return;
      ready.add(w);
      if (!printed) {
        printed = true;
        o.onUrl(msg.airlockUrl);
      }
    });
    cluster.on('exit', (w, exitCode, signal) => {
      if (!stopping && !ready.has(w)) {
        o.log(`airlock serve: worker ${w.process.pid} exited (${signal ?? exitCode}) before it could serve; stopping`);
        code = 1;
        stop();
      } else if (!stopping) {
        o.log(`airlock serve: worker ${w.process.pid} exited (${signal ?? exitCode}); starting another`);
        cluster.fork();
        return;
      }
      if (alive().length === 0) resolve(code);
    });
    o.trap.onHangup(() => forward('SIGHUP'));
    void whenAborted(o.trap.signal).then(stop);
    for (let i = 0; i < o.workers; i++) cluster.fork();
  });
}

export const isWorker = () => cluster.isWorker;
