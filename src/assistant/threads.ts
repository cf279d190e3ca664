import { randomBytes } from 'node:crypto';
import type { Turn } from './prompt.js';

/**
 * Conversations kept so a follow-up with its `threadId` continues it: in memory only, bounded in
 * number (the oldest used goes first), in turns per thread and in idle time. A thread belongs to
 * the `fp` (the reader's browser fingerprint) that began it: another fp naming it starts afresh,
 * never reads someone else's conversation.
 */
export interface ThreadLimits {
  maxThreads: number;
  maxTurns: number;
  idleMs: number;
}
export const DEFAULT_THREAD_LIMITS: ThreadLimits = { maxThreads: 10_000, maxTurns: 10, idleMs: 60 * 60 * 1000 };

interface Thread {
  fp: string;
  turns: Turn[];
  at: number;
}

export class Threads {
  private readonly map = new Map<string, Thread>();
  private readonly limits: ThreadLimits;

  constructor(
    limits: Partial<ThreadLimits> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.limits = { ...DEFAULT_THREAD_LIMITS, ...limits };
  }

  get size(): number {
    return this.map.size;
  }

  /** The thread to answer in: the one named, if it is this fp's and still kept; else a new id with no history. */
  open(threadId: string | undefined, fp: string): { id: string; history: readonly Turn[] } {
    const t = threadId === undefined ? undefined : this.map.get(threadId);
    if (t !== undefined && t.fp === fp && this.now() - t.at <= this.limits.idleMs) return { id: threadId!, history: t.turns };
    return { id: `thr_${randomBytes(12).toString('hex')}`, history: [] };
  }

  /** A finished answer: the turn kept (the thread made or moved to the newest). */
  add(id: string, fp: string, turn: Turn): void {
    const old = this.map.get(id);
    const turns = old !== undefined && old.fp === fp ? [...old.turns, turn].slice(-this.limits.maxTurns) : [turn];
    this.map.delete(id); // Map order is insertion order: re-inserted, it is the newest
    this.map.set(id, { fp, turns, at: this.now() });
    this.sweep();
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, t] of this.map) {
      if (this.map.size <= this.limits.maxThreads && now - t.at <= this.limits.idleMs) break; // the rest are newer
      this.map.delete(id);
    }
  }
}
