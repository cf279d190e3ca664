import type { Context } from 'hono';
import type { Dispatcher } from 'undici';
import type { AppEnv } from '../serve/index.js';
import { redact } from '../util/redact.js';
import { upstreamErrorText } from './upstream.js';

/** A non-2xx upstream answer, as the browser may see it: never the service's auth details. */
export async function refused(
  c: Context<AppEnv>,
  res: Dispatcher.ResponseData,
  what: string,
  log: (l: string) => void,
  service = 'the assistant service',
): Promise<Response> {
  const detail = await upstreamErrorText(res.body);
  const s = res.statusCode;
  log(redact(`airlock relay: ${what}: upstream HTTP ${s}${detail ? ` ${detail}` : ''}`));
  if (s === 429) {
    const ra = res.headers['retry-after'];
    if (typeof ra === 'string' && /^\d{1,6}$/.test(ra.trim())) c.header('Retry-After', ra.trim());
    return c.json({ error: `rate limit exceeded at ${service}` }, 429);
  }
  // 401/403 are about the relay's key, not the reader: a bad gateway from the reader's side.
  if (s === 401 || s === 403) return c.json({ error: `${service} refused this server's key (HTTP ${s}); see the server log` }, 502);
  if (s === 400 || s === 404 || s === 413 || s === 422) return c.json({ error: `${service} answered HTTP ${s}${detail ? `: ${detail}` : ''}` }, s);
  return c.json({ error: `${service} answered HTTP ${s}` }, 502);
}
