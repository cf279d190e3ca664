import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { runServer } from '../../src/serve/run.js';
import { trapSignals, type SignalTrap } from '../../src/util/signals.js';
import { AirlockError } from '../../src/errors.js';
import { occupiedPort } from '../helpers/proc.js';
import { cleanup, get, labelledSite, setActive, tempRoot, writeVersion } from './helpers.js';
import { until } from '../helpers/wait.js';

/**
 * runServer's own clean-up, past the CLI's early probe: a listen that fails after the version
 * loaded (a port taken in between) closes the server, releases the lease and runs onClosed.
 */
let root: string;
let store: string;
let blocker: Awaited<ReturnType<typeof occupiedPort>>;
let port: number;
let trap: SignalTrap | null = null;

beforeAll(async () => {
  root = await tempRoot('airlock-run-');
  store = join(root, 'store');
  await writeVersion(store, 'v1', labelledSite('v1'));
  await setActive(store, 'v1');
  blocker = await occupiedPort();
  port = blocker.port;
});
afterAll(async () => {
  await blocker.release();
  await cleanup(root);
});
afterEach(() => {
  trap?.dispose();
  trap = null;
});

const leases = async () => readdir(join(store, 'leases')).catch(() => [] as string[]);

describe('runServer', () => {
  it('a listen error after loading: AIRLOCK_LISTEN naming host:port, lease released, onClosed run', async () => {
    trap = trapSignals();
    let closed = 0;
    const err = await runServer({
      server: { store },
      port,
      host: '127.0.0.1',
      workers: 1,
      trap,
      hangup: 'reload',
      onUrl: () => {
        throw new Error('must not listen');
      },
      log: () => {},
      onClosed: async () => {
        closed++;
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AirlockError);
    expect((err as AirlockError).code).toBe('AIRLOCK_LISTEN');
    expect((err as AirlockError).exitCode).toBe(1);
    expect((err as AirlockError).message).toContain(`127.0.0.1:${port}: the port is already in use`);
    expect(closed).toBe(1);
    expect(await leases()).toEqual([]);
  });

  it('a port got for --port 0 and taken meanwhile (a replica started beside it): any other free port, not a failure', async () => {
    trap = trapSignals();
    let url = '';
    const done = runServer({
      server: { store },
      port,
      anyPort: true,
      host: '127.0.0.1',
      workers: 1,
      trap,
      hangup: 'reload',
      onUrl: (u) => {
        url = u;
      },
      log: () => {},
    });
    await until(() => !!url, { timeoutMs: 10_000, intervalMs: 10 });
    expect(new URL(url).port).not.toBe(String(port));
    expect((await get(url + '_airlock/health')).status).toBe(200);
    process.emit('SIGTERM', 'SIGTERM');
    expect(await done).toBe(0);
  });

  it('serves until the trap fires (a SIGTERM), then closes and releases its lease', async () => {
    trap = trapSignals();
    let url = '';
    const done = runServer({
      server: { store },
      port: 0,
      host: '127.0.0.1',
      workers: 1,
      trap,
      hangup: 'reload',
      onUrl: (u) => {
        url = u;
      },
      log: () => {},
    });
    await until(() => !!url, { timeoutMs: 10_000, intervalMs: 10 }).catch(() => undefined);
    expect((await get(url + '_airlock/health')).status).toBe(200);
    expect(await leases()).toHaveLength(1);
    process.emit('SIGHUP', 'SIGHUP'); // reload: keeps serving
    expect((await get(url + '_airlock/health')).status).toBe(200);
    process.emit('SIGTERM', 'SIGTERM');
    process.emit('SIGTERM', 'SIGTERM');
    expect(await done).toBe(0);
    expect(trap.received).toBe('SIGTERM');
    expect(await leases()).toEqual([]);
  });

  it('a trap that fired while the version loaded: never listens, exit 0, nothing held', async () => {
    trap = trapSignals();
    process.emit('SIGINT', 'SIGINT');
    let listened = false;
    expect(
      await runServer({
        server: { store },
        port: 0,
        host: '127.0.0.1',
        workers: 1,
        trap,
        hangup: 'stop',
        onUrl: () => {
          listened = true;
        },
        log: () => {},
      }),
    ).toBe(0);
    expect(listened).toBe(false);
    expect(await leases()).toEqual([]);
  });
});
