import { createServer } from 'node:net';
import { AirlockError, EXIT } from '../errors.js';
import { escapeControls } from './terminal.js';

/**
 * A listen failure (port taken, unknown host, no permission) as the operator should read it: the
 * address tried, in host:port form (escaped), and what to do, in words: the errno is only a field
 * of the JSON error. Exit 1 (other failure).
 * Errors that are not about listening pass through unchanged.
 */
const WHY: Record<string, string> = {
  EADDRINUSE: 'the port is already in use (another server?); choose another with --port, or --port 0 for any free port',
  EACCES: 'permission denied (ports below 1024 need privileges); choose a port of 1024 or more with --port',
  EPERM: 'operation not permitted; choose another --port or --host',
  EADDRNOTAVAIL: "the address is not one of this machine's; check --host (0.0.0.0 listens on every interface)",
  ENOTFOUND: 'unknown host name; check --host (an address such as 127.0.0.1 or 0.0.0.0, or a name this machine resolves)',
  EAI_AGAIN: 'the host name could not be resolved now; check --host or use an address',
  EAI_FAIL: 'the host name could not be resolved; check --host or use an address',
  EAFNOSUPPORT: 'this machine does not support that address family; check --host',
};

export function hostPort(host: string, port: number): string {
  const h = escapeControls(host);
  return `${h.includes(':') ? `[${h}]` : h}:${port}`;
}

export function listenError(err: unknown, host: string, port: number): unknown {
  const e = err as NodeJS.ErrnoException | null;
  const code = e && typeof e === 'object' && typeof e.code === 'string' ? e.code : '';
  const why = WHY[code];
  if (why === undefined || err instanceof AirlockError) return err;
  const where = hostPort(host, port);
  return new AirlockError('AIRLOCK_LISTEN', `cannot listen on ${where}: ${why}`, EXIT.FAILURE, { subject: where, cause: code }, { cause: err });
}

/**
 * Fail fast: bind host:port once and let go, before a command spends seconds or minutes loading
 * what it will serve (port 0 still checks the host). The real listen still handles a port taken
 * meanwhile.
 */
export async function probeListen(host: string, port: number): Promise<void> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen({ host, port, exclusive: true }, () => resolve());
  }).catch((err: unknown) => {
    throw listenError(err, host, port);
  });
  await new Promise<void>((resolve) => srv.close(() => resolve()));
}
