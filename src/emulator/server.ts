import { rm } from 'node:fs/promises';
import { makeTempFolder } from '../util/fsx.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { createEmulator } from './app.js';
import type { EmulatorOptions } from './context.js';
import type { Faults, FaultsPatch } from './faults.js';
import { handleObject } from './routes/objects.js';
import { refuseConnect } from '../util/http-connect.js';
import type { EmulatorState } from './state.js';

export interface StartOptions extends Omit<EmulatorOptions, 'cacheDir'> {
  port?: number;
  host?: string;
  cacheDir?: string;
}
export interface RunningEmulator {
  url: string;
  app: Hono;
  keys: { admin: string; assistant: string };
  state: EmulatorState;
  setFaults(patch: FaultsPatch): Faults;
  server: Server;
  close(): Promise<void>;
}

/** Listen on host:port (default 127.0.0.1, a free port). close() stops it and removes the archive cache. */
export async function startEmulator(o: StartOptions = {}): Promise<RunningEmulator> {
  const ownCache = !o.cacheDir;
  const cacheDir = o.cacheDir ?? (await makeTempFolder('airlock-emulator-'));
  const emu = createEmulator({ ...o, cacheDir });
  const listener = getRequestListener(emu.app.fetch);
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/_objects/')) handleObject(emu.ctx, req, res);
    else void listener(req, res);
  });
  refuseConnect(server, 'GET, HEAD, POST', true);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve());
  }).catch(async (err: unknown) => {
    if (ownCache) await rm(cacheDir, { recursive: true, force: true }); // a failed start leaves nothing behind
    throw err;
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    app: emu.app,
    keys: emu.keys,
    state: emu.ctx.state,
    setFaults: (patch) => emu.ctx.state.setFaults(patch),
    server,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (ownCache) await rm(cacheDir, { recursive: true, force: true });
    },
  };
}
