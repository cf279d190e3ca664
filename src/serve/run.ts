import cluster from 'node:cluster';
import { createWriteStream } from 'node:fs';
import { createAirlockServer, type AirlockServerOptions } from './server.js';
import { runPrimary } from './cluster.js';

/**
 * Run a server until SIGTERM/SIGINT (stop accepting, finish in-flight requests, exit 0), re-read
 * the active version on SIGHUP; with workers > 1, as a node:cluster primary or worker.
 * `onUrl` gets the URL once the (first) server listens.
 */
export interface RunOptions {
  server: AirlockServerOptions;
  port: number;
  host: string;
  workers: number;
  accessLog?: string;
  onUrl: (url: string) => void;
  log: (line: string) => void;
  /** Extra clean-up after the server closed (preview removes its temp folder). */
  onClosed?: () => Promise<void>;
}

export async function runServer(o: RunOptions): Promise<number> {
  if (o.workers > 1 && cluster.isPrimary) {
    let printed = false;
    cluster.on('message', (_w, msg: { airlockUrl?: string }) => {
      if (typeof msg?.airlockUrl === 'string' && !printed) {
        printed = true;
        o.onUrl(msg.airlockUrl);
      }
    });
    const code = await runPrimary(o.workers, o.log);
    await o.onClosed?.();
    return code;
  }
  // Signals are taken from the very start: a SIGTERM while a large version is still loading must
  // still end the process cleanly (lease released, preview folder removed), not be lost.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  const accessLog = o.accessLog === undefined ? null : o.accessLog === '-' ? process.stderr : createWriteStream(o.accessLog, { flags: 'a' });
  const srv = await createAirlockServer({ ...o.server, accessLog, log: o.log });
  const url = await srv.listen(o.port, o.host);
  if (cluster.isWorker) process.send?.({ airlockUrl: url });
  else o.onUrl(url);
  o.log(`airlock serve: serving ${srv.current().version} at ${url}${cluster.isWorker ? ` (worker ${process.pid})` : ''}`);
  const onHup = () => void srv.recheck();
  process.on('SIGHUP', onHup);
  await stopped;
  process.off('SIGHUP', onHup);
  o.log('airlock serve: shutting down: finishing in-flight requests');
  await srv.close();
  if (accessLog && accessLog !== process.stderr) await new Promise<void>((r) => accessLog.end(() => r()));
  await o.onClosed?.();
  // A cluster worker is held alive by its IPC channel: let go of it so the process can end.
  if (cluster.isWorker) cluster.worker?.disconnect();
  return 0;
}
