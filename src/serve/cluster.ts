import cluster from 'node:cluster';

/**
 * `--workers N`: the primary forks N workers that each run the whole server on the shared port
 * (node:cluster hands out connections). Every worker watches the store itself, so all switch
 * within the same 1 s. SIGHUP is forwarded; SIGTERM/SIGINT are forwarded and the primary exits 0
 * once every worker has finished its in-flight requests and exited.
 */
export function runPrimary(workers: number, log: (line: string) => void): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    for (let i = 0; i < workers; i++) cluster.fork();
    cluster.on('exit', (w, code, signal) => {
      if (!stopping) {
        // A worker died unexpectedly: replace it so capacity stays at N (not in a tight loop: it had to start first).
        log(`airlock serve: worker ${w.process.pid} exited (${signal ?? code}); starting another`);
        cluster.fork();
        return;
      }
      if (Object.keys(cluster.workers ?? {}).length === 0) resolve(0);
    });
    const forward = (sig: NodeJS.Signals) => {
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(sig);
    };
    process.on('SIGHUP', () => forward('SIGHUP'));
    const stop = (sig: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      forward(sig);
      if (Object.keys(cluster.workers ?? {}).length === 0) resolve(0);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGTERM'));
  });
}

export const isWorker = () => cluster.isWorker;
