import { randomBytes } from 'node:crypto';
import type { FaultsPatch } from './faults.js';
import { DEFAULT_TIMINGS, type Timings } from './lifecycle.js';
import { BundleCache } from './bundles.js';
import { defaultSites, loadPages, type SiteConfig } from './sites.js';
import { EmulatorState } from './state.js';
import type { Page } from './text.js';

export interface EmulatorOptions {
  /** Domains and their fixture sites; default docs.example.com → fixtures/site. */
  sites?: Record<string, SiteConfig>;
  /** Accepted admin keys (default: one random `svc_emu_…` key per emulator, see `keys`). */
  adminKeys?: string[];
  /** Accepted assistant keys (default: one random `svc_dsc_emu_…` key). */
  assistantKeys?: string[];
  /** Keys the emulator knows but that lack permission: 403. */
  forbiddenKeys?: string[];
  timings?: Partial<Timings>;
  /** How long an agent job stays `active`. */
  agentJobMs?: number;
  /** Agent jobs that exist from the start (each `active` for agentJobMs, then its outcome). */
  agentJobs?: Array<{ projectId: string; id?: string; outcome: 'completed' | 'failed' | 'archived' }>;
  /** Pause between assistant stream chunks, so streaming can be observed. */
  streamDelayMs?: number;
  rateLimits?: { perOrgPerHour?: number; perIpPerDay?: number };
  faults?: FaultsPatch;
  /** Where built archives go (default: a temp dir removed on close). */
  cacheDir: string;
  now?: () => number;
}

export interface EmulatorContext {
  state: EmulatorState;
  sites: Record<string, SiteConfig>;
  keys: { admin: string[]; assistant: string[]; forbidden: string[] };
  timings: Timings;
  agentJobMs: number;
  streamDelayMs: number;
  limits: { perOrgPerHour: number; perIpPerDay: number };
  /** Signs object links; random per emulator, so links of one run are worthless to the next. */
  secret: Buffer;
  bundles: BundleCache;
  now: () => number;
  pages(domain: string): Promise<Page[]>;
}

export function createContext(o: EmulatorOptions): EmulatorContext {
  const sites = o.sites ?? defaultSites();
  const pageCache = new Map<string, Promise<Page[]>>();
  const now = o.now ?? Date.now;
  const state = new EmulatorState(o.faults);
  for (const j of o.agentJobs ?? []) state.addAgentJob(j.projectId, j.outcome, now(), j.id);
  return {
    state,
    sites,
    keys: {
      admin: o.adminKeys ?? [`svc_emu_${randomBytes(12).toString('hex')}`],
      assistant: o.assistantKeys ?? [`svc_dsc_emu_${randomBytes(12).toString('hex')}`],
      forbidden: o.forbiddenKeys ?? [],
    },
    timings: { ...DEFAULT_TIMINGS, ...o.timings },
    agentJobMs: o.agentJobMs ?? 1000,
    streamDelayMs: o.streamDelayMs ?? 15,
    limits: { perOrgPerHour: o.rateLimits?.perOrgPerHour ?? 10_000, perIpPerDay: o.rateLimits?.perIpPerDay ?? 10_000 },
    secret: randomBytes(32),
    bundles: new BundleCache(o.cacheDir),
    now,
    pages(domain) {
      const site = sites[domain];
      if (!site) return Promise.resolve([]);
      let p = pageCache.get(domain);
      if (!p) pageCache.set(domain, (p = loadPages(domain, site.dir)));
      return p;
    },
  };
}

/** Known domains: fixture sites plus domains served from a given archive file. */
export function knownDomain(ctx: EmulatorContext, domain: string): boolean {
  return Object.hasOwn(ctx.sites, domain) || ctx.state.faults.serveArchive.some((s) => s.domain === domain);
}
