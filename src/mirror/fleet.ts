import { Hono } from 'hono';
import { linkOrigin, type ApiDeps } from './api.js';
import { z } from 'zod';
import type { AppEnv } from '../serve/index.js';
import { VERSION_LABEL } from '../package/index.js';
import { readState } from '../store/index.js';
import { PACKAGE_NAME } from './objects.js';
import { signLink } from './sign.js';
import { checkBearer } from './tokens.js';
import { readVersion } from './versions.js';
import { describeZodError } from '../upstream/describe.js';

/**
 * Rollout coordination for replicas that follow this mirror (`airlock serve --follow URL`), in
 * two phases. Each replica polls `POST /_airlock/fleet/poll` with a report (what it serves, what
 * it has prepared, what it refused) and gets the mirror's active version back with a signed
 * package link. Phase 1 "preparing": replicas download, verify, import and pre-load the version.
 * Phase 2 "switch": once every live replica has prepared it (or the prepare deadline passed), the
 * mirror fixes one switch instant and tells everyone how far away it is (`activateInMs`, relative,
 * so clocks need not agree); replicas switch at that instant. A replica that refuses the version
 * (verification failed) puts the rollout on hold: no replica is told to switch to it.
 * State is per process and rebuilt from the replicas' next polls after a restart.
 */
export const FLEET_POLL_PATH = '/_airlock/fleet/poll';
const REPORT_MAX_BYTES = 16 * 1024;
const label = z.string().regex(VERSION_LABEL);
const reason = z.string().max(2048);

export const FleetReportSchema = z.strictObject({
  replica: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/),
  serving: label.nullable(),
  prepared: label.nullable(),
  /** A version this replica refused, and why (kept until the mirror announces another version). */
  refused: z.strictObject({ version: label, reason }).nullable(),
});
export type FleetReport = z.infer<typeof FleetReportSchema>;

// Not strict: a newer mirror may add fields.
export const FleetAnswerSchema = z.object({
  version: label.nullable(),
  packageSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  packageUrl: z
    .string()
    .max(4096)
    .regex(/^https?:\/\//, 'must be an http(s) URL')
    .nullable(),
  phase: z.enum(['none', 'preparing', 'switch', 'held']),
  /** Milliseconds from this answer to the switch (≤ 0: switch on arrival); null unless phase is switch. */
  activateInMs: z.number().int().nullable(),
  activateAt: z.string().nullable(),
  held: z.object({ replica: z.string().max(128), reason }).nullable(),
  replicas: z.number().int().nonnegative(),
  prepared: z.number().int().nonnegative(),
});
export type FleetAnswer = z.infer<typeof FleetAnswerSchema>;

/** The mirror API's own dependencies (links are signed the same way), and the rollout's. */
export interface FleetOptions extends ApiDeps {
  log: (line: string) => void;
  /** Time from "everyone prepared" to the switch: replicas must poll within it (default 5 s, 2× a 2 s poll plus jitter). */
  leadMs?: number;
  /** Switch without the stragglers after this long in "preparing" (default 10 min). */
  prepareTimeoutMs?: number;
  /** A replica silent for this long no longer counts (default 15 s). */
  replicaTtlMs?: number;
  /** Processes serving the mirror: the rollout state is per process, so more than one cannot coordinate. */
  workers?: number;
}

interface Replica {
  seen: number;
  serving: string | null;
  prepared: string | null;
  refused: { version: string; reason: string } | null;
}
const MAX_REPLICAS = 1024;

/** The rollout state machine (pure but for the clock given to each call). */
export class Rollout {
  target: string | null = null;
  since = 0;
  activateAt: number | null = null;
  held: { replica: string; reason: string } | null = null;
  readonly replicas = new Map<string, Replica>();

  constructor(private readonly o: { leadMs: number; prepareTimeoutMs: number; replicaTtlMs: number; log: (line: string) => void }) {}

  /** Record a report and move the rollout on; returns what the replica is told (without the link). */
  step(active: string | null, r: FleetReport | null, now: number): { phase: FleetAnswer['phase']; live: Replica[]; ready: number } {
    if (active !== this.target) {
      this.target = active;
      this.since = now;
      this.activateAt = null;
      this.held = null;
      if (active !== null) this.o.log(`airlock mirror: fleet: version ${active} is active: replicas prepare it`);
    }
    if (r !== null && (this.replicas.has(r.replica) || this.replicas.size < MAX_REPLICAS)) {
      this.replicas.set(r.replica, { seen: now, serving: r.serving, prepared: r.prepared, refused: r.refused });
    }
    for (const [id, x] of this.replicas) if (now - x.seen > this.o.replicaTtlMs) this.replicas.delete(id);
    const live = [...this.replicas.values()];
    if (active === null) return { phase: 'none', live, ready: 0 };
    const ready = live.filter((x) => x.serving === active || x.prepared === active).length;
    if (this.held === null && this.activateAt === null) {
      const refusal = [...this.replicas].find(([, x]) => x.refused?.version === active);
      if (refusal) {
        this.held = { replica: refusal[0], reason: refusal[1].refused!.reason };
        this.o.log(
          `airlock mirror: fleet: ROLLOUT OF ${active} HELD: replica ${refusal[0]} refused it: ${refusal[1].refused!.reason}; no replica switches to it`,
        );
      } else if (ready === live.length || now - this.since >= this.o.prepareTimeoutMs) {
        this.activateAt = now + this.o.leadMs;
        const late = live.length - ready;
        this.o.log(
          `airlock mirror: fleet: ${ready} replica(s) prepared ${active}: switch at ${new Date(this.activateAt).toISOString()}${late ? ` (${late} not ready: they switch when they are)` : ''}`,
        );
      }
    }
    return { phase: this.held ? 'held' : this.activateAt !== null ? 'switch' : 'preparing', live, ready };
  }
}

export function fleetApi(o: FleetOptions): Hono<AppEnv> {
  const rollout = new Rollout({
    leadMs: o.leadMs ?? 5_000,
    prepareTimeoutMs: o.prepareTimeoutMs ?? 600_000,
    replicaTtlMs: o.replicaTtlMs ?? 15_000,
    log: o.log,
  });
  const app = new Hono<AppEnv>();
  app.post(FLEET_POLL_PATH, async (c) => {
    const auth = checkBearer(c.req.header('authorization'), o.tokens);
    if (auth === 'missing') return c.json({ error: 'missing Authorization: Bearer <key>' }, 401);
    if (auth === 'wrong') return c.json({ error: 'invalid API key' }, 403);
    if ((o.workers ?? 1) > 1)
      return c.json({ error: 'fleet coordination needs a mirror with one worker (--workers 1): the rollout state is per process' }, 409);
    const len = Number(c.req.header('content-length') ?? NaN);
    if (!(len <= REPORT_MAX_BYTES)) return c.json({ error: `a fleet report needs a Content-Length of at most ${REPORT_MAX_BYTES} bytes` }, 413);
    const text = await c.req.text();
    if (Buffer.byteLength(text) > REPORT_MAX_BYTES) return c.json({ error: `a fleet report is at most ${REPORT_MAX_BYTES} bytes` }, 413);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return c.json({ error: 'a fleet report is a JSON object' }, 400);
    }
    const report = FleetReportSchema.safeParse(json);
    if (!report.success) return c.json({ error: `invalid fleet report: ${describeZodError(report.error, 5)}` }, 400);
    const active = (await readState(o.store)).active;
    const v = active === null ? null : await readVersion(o.store, active);
    const now = o.now();
    const s = rollout.step(v === null ? null : active, report.data, now);
    let packageUrl: string | null = null;
    if (v !== null) {
      const origin = linkOrigin(o, c);
      if (origin === null) return c.json({ error: 'a valid Host header is needed to build the link' }, 400);
      const expires = Math.floor(now / 1000) + o.ttlSeconds;
      packageUrl = `${origin}/_airlock/objects/${v.label}/${PACKAGE_NAME}?${signLink(o.secret, { label: v.label, name: PACKAGE_NAME, form: 'airlock', expires })}`;
    }
    const answer: FleetAnswer = {
      version: v?.label ?? null,
      packageSha256: v?.packageSha256 ?? null,
      packageUrl,
      phase: s.phase,
      activateInMs: s.phase === 'switch' ? rollout.activateAt! - now : null,
      activateAt: s.phase === 'switch' ? new Date(rollout.activateAt!).toISOString() : null,
      held: rollout.held,
      replicas: s.live.length,
      prepared: s.ready,
    };
    return c.json(answer);
  });
  // The rollout as an operator sees it (same tokens): who serves what, who refused what.
  app.get('/_airlock/fleet', (c) => {
    const auth = checkBearer(c.req.header('authorization'), o.tokens);
    if (auth !== 'ok') return c.json({ error: auth === 'missing' ? 'missing Authorization: Bearer <key>' : 'invalid API key' }, auth === 'missing' ? 401 : 403);
    const now = o.now();
    return c.json({
      version: rollout.target,
      phase: rollout.held ? 'held' : rollout.activateAt !== null ? 'switch' : rollout.target === null ? 'none' : 'preparing',
      activateAt: rollout.activateAt === null ? null : new Date(rollout.activateAt).toISOString(),
      held: rollout.held,
      replicas: [...rollout.replicas]
        .filter(([, x]) => now - x.seen <= (o.replicaTtlMs ?? 15_000))
        .map(([id, x]) => ({ replica: id, serving: x.serving, prepared: x.prepared, refused: x.refused, lastSeenMsAgo: now - x.seen })),
    });
  });
  return app;
}
