import { randomBytes } from 'node:crypto';
import { redact } from '../util/redact.js';
import { DEFAULT_FAULTS, mergeFaults, type Faults, type FaultsPatch } from './faults.js';
import type { StoredObject } from './bundles.js';
import type { JobRecord } from './lifecycle.js';

export interface ApiRequestRecord {
  method: string;
  path: string;
  status: number;
  auth: 'none' | 'admin' | 'assistant' | 'other';
}
export interface ObjectRequestRecord {
  method: string;
  path: string;
  headers: Record<string, string>;
  status: number;
  bytesSent: number;
}
export interface AgentJobRecord {
  projectId: string;
  id: string;
  createdAt: number;
  outcome: 'completed' | 'failed' | 'archived';
}

/**
 * Everything the emulator remembers, in memory. Recorded requests never hold a key: headers are
 * redacted on the way in, so `GET /_emulator/state` and test output cannot leak one.
 */
export class EmulatorState {
  readonly jobs = new Map<string, JobRecord>();
  readonly objects = new Map<string, StoredObject>();
  readonly agentJobs = new Map<string, AgentJobRecord>();
  readonly apiRequests: ApiRequestRecord[] = [];
  readonly objectRequests: ObjectRequestRecord[] = [];
  /** Fixed-window counters for the assistant's limits: key → {window start, count}. */
  readonly rate = new Map<string, { start: number; count: number }>();
  faults: Faults;

  constructor(faults: FaultsPatch = {}) {
    this.faults = mergeFaults(DEFAULT_FAULTS, faults);
  }

  setFaults(patch: FaultsPatch): Faults {
    this.faults = mergeFaults(this.faults, patch);
    return this.faults;
  }

  recordObjectRequest(r: Omit<ObjectRequestRecord, 'headers'> & { headers: Record<string, string | string[] | undefined> }): ObjectRequestRecord {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) headers[k] = redact(Array.isArray(v) ? v.join(', ') : v);
    const rec = { ...r, headers };
    this.objectRequests.push(rec);
    return rec;
  }

  addAgentJob(
    projectId: string,
    outcome: AgentJobRecord['outcome'] = 'completed',
    now = Date.now(),
    id = `agj_${randomBytes(6).toString('hex')}`,
  ): AgentJobRecord {
    const job = { projectId, id, createdAt: now, outcome };
    this.agentJobs.set(`${projectId}/${job.id}`, job);
    return job;
  }

  /** Count a hit against a fixed window; returns the ms until the window resets when over `limit`. */
  hit(key: string, limit: number, windowMs: number, now: number): number | null {
    const cur = this.rate.get(key);
    const w = cur && now - cur.start < windowMs ? cur : { start: now, count: 0 };
    w.count++;
    this.rate.set(key, w);
    return w.count > limit ? w.start + windowMs - now : null;
  }
}
