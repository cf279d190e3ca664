import { createHash, randomBytes } from 'node:crypto';
import type { Turn } from './prompt.js';

/**
 * Conversations kept so a follow-up with its `threadId` continues it: in memory only, bounded in
 * number and in characters in all (the oldest used goes first), in turns per thread, in the
 * length of each turn kept, and in idle time. A thread belongs to
 * the `fp` (the reader's browser fingerprint) that began it: another fp naming it starts afresh,
 * never reads someone else's conversation.
 */
export interface ThreadLimits {
  maxThreads: number;
  maxTurns: number;
  idleMs: number;
  /** A question or an answer is kept cut to this many characters (the prompt quotes no more of it). */
  maxTurnChars: number;
  /** The characters kept in all threads together: the oldest used go first beyond it. */
  maxChars: number;
}
export const DEFAULT_THREAD_LIMITS: ThreadLimits = { maxThreads: 10_000, maxTurns: 10, idleMs: 60 * 60 * 1000, maxTurnChars: 4_000, maxChars: 16_000_000 };

interface Thread {
  /** The fp's digest: what a reader sends is not kept whole (it may be any length). */
  fp: string;
  turns: Turn[];
  at: number;
  chars: number;
}

const digest = (fp: string) => createHash('sha256').update(fp).digest('base64');
/** The first `max` characters as a string of their own: a slice may keep the whole original alive (a 120 KB question for 4,000 characters kept). */
const own = (s: string, max: number) => Buffer.from(s.slice(0, max), 'utf16le').toString('utf16le');

export class Threads {
  private readonly map = new Map<string, Thread>();
  private readonly limits: ThreadLimits;
  private chars = 0;

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
    if (t !== undefined && t.fp === digest(fp) && this.now() - t.at <= this.limits.idleMs) return { id: threadId!, history: t.turns };
    return { id: `thr_${randomBytes(12).toString('hex')}`, history: [] };
  }

  /** A finished answer: the turn kept (the thread made or moved to the newest). */
  add(id: string, fp: string, turn: Turn): void {
    const owner = digest(fp);
    const max = this.limits.maxTurnChars;
    const kept = { question: own(turn.question, max), answer: own(turn.answer, max) };
    const old = this.map.get(id);
    const turns = old !== undefined && old.fp === owner ? [...old.turns, kept].slice(-this.limits.maxTurns) : [kept];
    this.drop(id); // Map order is insertion order: re-inserted, it is the newest
    const chars = turns.reduce((n, t) => n + t.question.length + t.answer.length, 0);
    this.map.set(id, { fp: owner, turns, at: this.now(), chars });
    this.chars += chars;
    this.sweep();
  }

  private drop(id: string): void {
    const t = this.map.get(id);
    if (t === undefined) return;
    this.chars -= t.chars;
    this.map.delete(id);
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, t] of this.map) {
      if (this.map.size <= this.limits.maxThreads && this.chars <= this.limits.maxChars && now - t.at <= this.limits.idleMs) break; // the rest are newer
      this.drop(id);
    }
  }
}
