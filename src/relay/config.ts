import { AuthError, UsageError } from '../errors.js';
import { isOn, type ResolvedFeatures } from '../features/resolve.js';
import { checkKeyType } from '../upstream/keys.js';

export interface RelayConfig {
  upstreamUrl: string;
  key: string;
}

/**
 * The relay's upstream and key, checked at start-up (before the server listens): null when neither
 * search nor assistant is on; else `--assistant-url` (default AIRLOCK_API_URL) must be an http(s)
 * base URL without credentials, query or fragment (exit 2), and AIRLOCK_ASSISTANT_KEY must be an
 * assistant key `svc_dsc_…` (AuthError, exit 5). The key comes only from the environment: a flag
 * value would show in `ps` (secrets come from the environment only).
 */
export function relayConfig(resolved: ResolvedFeatures, flagUrl: string | undefined, env: NodeJS.ProcessEnv): RelayConfig | null {
  if (!isOn(resolved, 'assistant') && !isOn(resolved, 'search')) return null;
  const raw = flagUrl ?? env.AIRLOCK_API_URL;
  const what = flagUrl !== undefined ? '--assistant-url' : 'AIRLOCK_API_URL';
  if (!raw) {
    throw new UsageError(
      `search/assistant are on in ${resolved.deployment} deployments and are relayed: set --assistant-url URL or AIRLOCK_API_URL (or --disable search,assistant)`,
      { subject: '--assistant-url' },
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${what}: ${JSON.stringify(raw)} is not a URL`, { subject: what });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw new UsageError(`${what}: ${JSON.stringify(raw)} must be an http(s) base URL without credentials, query or fragment`, { subject: what });
  }
  const given = env.AIRLOCK_ASSISTANT_KEY?.trim();
  if (!given) {
    throw new AuthError(
      'search/assistant are relayed and need an assistant key (svc_dsc_...): set AIRLOCK_ASSISTANT_KEY',
      { subject: 'AIRLOCK_ASSISTANT_KEY' },
      'AIRLOCK_AUTH_MISSING',
    );
  }
  const key = checkKeyType(given, 'assistant');
  return { upstreamUrl: url.href.replace(/\/+$/, ''), key };
}
