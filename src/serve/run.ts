import cluster from 'node:cluster';
import { constants } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { escapeControls } from '../util/terminal.js';
import { kindOf, openRegularFileIfExists } from '../util/fsx.js';
import { listenError } from '../util/listen.js';
import { whenAborted, type SignalTrap } from '../util/signals.js';
import { storeHolding } from '../store/holder.js';
import { createAirlockServer, type AirlockServer, type AirlockServerOptions } from './server.js';
import { runPrimary } from './cluster.js';

/**
 * Run a server until the command's signal trap fires (stop accepting, finish in-flight requests,
 * exit 0); with `hangup: 'reload'`, SIGHUP re-reads the active version instead. With workers > 1,
 * as a node:cluster primary or worker. `onUrl` gets the URL once the (first) server listens.
 * Whatever happens (a listen error, a load error, a signal at any moment) the server is closed, its
 * lease released and `onClosed` run before this returns or throws.
 */
export interface RunOptions {
  server: AirlockServerOptions;
  port: number;
  /** `port` is the one a start-up listener got for --port 0 (any free port): taken meanwhile, any other free port does. */
  anyPort?: boolean;
  host: string;
  workers: number;
  accessLog?: string;
  /** The command's signal trap (src/util/signals.ts), set up before anything was created. */
  trap: SignalTrap;
  /** SIGHUP: re-read the store's active version (serve), or stop like SIGTERM (preview, demo). */
  hangup: 'reload' | 'stop';
  onUrl: (url: string) => void;
  log: (line: string) => void;
  /** Once the server listens: start something that drives it (serve --follow); stopped before it closes. */
  attach?: (srv: AirlockServer) => { stop(): Promise<void> };
  /** Extra clean-up after the server closed (demo stops its emulator and removes its folder). */
  onClosed?: () => Promise<void>;
}

export async function runServer(o: RunOptions): Promise<number> {
  try {
    if (o.workers > 1 && cluster.isPrimary) return await runPrimary({ workers: o.workers, trap: o.trap, log: o.log, onUrl: o.onUrl });
    return await runOne(o);
  } finally {
    await o.onClosed?.();
    // A cluster worker is held alive by its IPC channel: let go of it so the process can end.
    if (cluster.isWorker) cluster.worker?.disconnect();
  }
}

/**
 * The access log: stderr for `-`, else a regular file appended to, created when missing. Opened
 * once at start, non-blocking and without following a link, and type-checked: a FIFO (whose open
 * would wait for a reader, past every signal), a folder, a device or a link is refused in words.
 */
async function openAccessLog(path: string, store: string | undefined): Promise<NodeJS.WritableStream> {
  if (path === '-') return process.stderr;
  const refuse = (why: string) =>
    new UsageError(`--access-log ${escapeControls(path)} ${why}; give a regular file (appended to) or - for stderr`, { subject: path }, 'AIRLOCK_ACCESS_LOG');
  // Appending to a store's own file (state.json, a version's manifest) would break the store, as any output there would.
  const holder = await storeHolding(path, store);
  if (holder !== null) throw refuse(`is inside the store ${escapeControls(holder)}, whose files only airlock writes`);
  // A FIFO or a device is named first (a FIFO's non-blocking open for writing fails as "no reader");
  // a link is refused by the open itself (O_NOFOLLOW), in the same words as every other input.
  const st = await lstat(path).catch(() => null);
  if (st !== null && !st.isFile() && !st.isSymbolicLink()) throw refuse(`is ${kindOf(st)}, not a regular file`);
  const opened = await openRegularFileIfExists(path, refuse, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0));
  if (opened === null) throw refuse('cannot be created (its folder is missing)');
  return opened.fh.createWriteStream();
}

async function runOne(o: RunOptions): Promise<number> {
  const accessLog = o.accessLog === undefined ? null : await openAccessLog(o.accessLog, o.server.store);
  try {
    const srv = await createAirlockServer({ ...o.server, accessLog, log: o.log });
    let attached: { stop(): Promise<void> } | null = null;
    try {
      if (o.trap.signal.aborted) return 0; // stopped while the version loaded: never listen
      const url = await srv
        .listen(o.port, o.host)
        .catch((err: unknown) => {
          // Another process (a replica started beside it) was handed the port between the start-up listener's close and this listen.
          if (o.anyPort && (err as NodeJS.ErrnoException).code === 'EADDRINUSE') return srv.listen(0, o.host);
          throw err;
        })
        .catch((err: unknown) => {
          throw listenError(err, o.host, o.port);
        });
      if (cluster.isWorker) process.send?.({ airlockUrl: url });
      else o.onUrl(url);
      o.log(`airlock serve: serving ${srv.current().version} at ${url}${cluster.isWorker ? ` (worker ${process.pid})` : ''}`);
      if (o.hangup === 'reload')
        o.trap.onHangup(() => {
          void srv.recheck();
          void srv.reloadTls();
        });
      attached = o.attach?.(srv) ?? null;
      await whenAborted(o.trap.signal);
      o.log('airlock serve: shutting down: finishing in-flight requests');
    } finally {
      await attached?.stop();
      await srv.close();
    }
  } finally {
    if (accessLog && accessLog !== process.stderr) await new Promise<void>((r) => accessLog.end(() => r()));
  }
  return 0;
}
