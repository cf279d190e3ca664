import type { Follower } from '../fleet/follow.js';
import type { ServeSettings } from '../values/settings.js';
import { readState } from '../store/state.js';
import { listenError } from '../util/listen.js';
import { startBootstrap } from './bootstrap.js';

/** serve --follow: the follower of the mirror, made before anything listens (the fleet loads only then). */
export async function makeFollower(
  s: ServeSettings,
  o: {
    store: string;
    env: NodeJS.ProcessEnv;
    log: (line: string) => void;
    onImport?: (seconds: number, result: 'ok' | 'failed') => void;
    onRefused?: (version: string) => void;
  },
): Promise<{ follower: Follower; fleet: typeof import('../fleet/index.js') } | null> {
  if (!s.follow) return null;
  const fleet = await import('../fleet/index.js');
  const follower = new fleet.Follower({
    mirror: s.follow.url,
    token: await fleet.followToken(s.follow.tokenFile, o.env),
    store: o.store,
    trust: s.follow.trust,
    allowUnsigned: s.follow.allowUnsigned,
    pollMs: s.follow.pollMs,
    log: o.log,
    onImport: o.onImport,
    onRefused: o.onRefused,
  });
  return { follower, fleet };
}

/**
 * An empty replica holds the port (health 200, ready 503) until the mirror's version is in.
 * Returns the port it held (the asked one but for port 0), or null when stopped by the signal.
 */
export async function fillEmptyReplica(
  follower: Follower,
  o: {
    url: string;
    store: string;
    port: number;
    host: string;
    signal: AbortSignal;
    log: (line: string) => void;
  },
): Promise<number | null> {
  if ((await readState(o.store)).active !== null) return o.port;
  const boot = await startBootstrap(o.port, o.host, () => `following ${o.url}: ${follower.status.error ?? 'getting its active version'}`).catch(
    (err: unknown) => {
      throw listenError(err, o.host, o.port);
    },
  );
  o.log(`airlock serve: store ${o.store} has no active version: getting the mirror's (${o.url})`);
  try {
    const v = await follower.first(o.signal);
    o.log(`airlock serve: follow: ${v} imported and active`);
  } catch (err) {
    if (o.signal.aborted) return null;
    throw err;
  } finally {
    await boot.close();
  }
  return boot.port;
}
