import { createHash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import type { EmulatorContext } from './context.js';
import { takeBurst } from './faults.js';

export type Env = { Variables: { org: string } };

/** The bearer token of a request, or null. Only `Bearer <token>` counts (RFC 6750 §2.1). */
function bearer(c: Context): string | null {
  const m = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(c.req.header('authorization') ?? '');
  return m ? m[1]! : null;
}

function kindOf(key: string | null): 'none' | 'admin' | 'assistant' | 'other' {
  if (!key) return 'none';
  if (key.startsWith('svc_dsc_')) return 'assistant';
  return key.startsWith('svc_') ? 'admin' : 'other';
}

/**
 * Every API route: record the call (never the key), apply pending 429/500 bursts, then check the
 * key like the service: none or unknown → 401, a known key of the wrong kind or without
 * permission → 403. `{error}` bodies throughout.
 */
export function apiGuard(ctx: EmulatorContext, kind: 'admin' | 'assistant'): MiddlewareHandler<Env> {
  const check = async (c: Context<Env>, key: string | null, next: () => Promise<void>): Promise<Response | void> => {
    const burst = takeBurst(ctx.state.faults);
    if (burst?.status === 429) {
      c.header('Retry-After', String(burst.retryAfter));
      return c.json({ error: 'rate limit exceeded' }, 429);
    }
    if (burst?.status === 500) return c.json({ error: 'internal server error' }, 500);
    if (!key) return c.json({ error: 'missing Authorization: Bearer <key>' }, 401);
    const wanted = kind === 'admin' ? ctx.keys.admin : ctx.keys.assistant;
    if (ctx.keys.forbidden.includes(key)) return c.json({ error: 'this key does not have permission for this resource' }, 403);
    if (!wanted.includes(key)) {
      const other = kind === 'admin' ? ctx.keys.assistant : ctx.keys.admin;
      if (other.includes(key)) return c.json({ error: `this endpoint needs an ${kind} key` }, 403);
      return c.json({ error: 'invalid API key' }, 401);
    }
    c.set('org', 'org_' + createHash('sha256').update(key).digest('hex').slice(0, 12));
    await next();
  };
  return async (c, next) => {
    const key = bearer(c);
    const res = await check(c, key, next);
    ctx.state.apiRequests.push({ method: c.req.method, path: c.req.path, status: res?.status ?? c.res.status, auth: kindOf(key) });
    return res ?? undefined;
  };
}

/** 403 `{error}` for every static-export call while the organisation has it off (fault switch). */
export function exportEnabled(ctx: EmulatorContext): MiddlewareHandler<Env> {
  return async (c, next) => {
    if (ctx.state.faults.staticExportDisabled) return c.json({ error: 'static export is not enabled for this organization' }, 403);
    await next();
  };
}
