/**
 * Fixed-window rate limits (pure; the clock is injected so tests need no sleeping). The service
 * counts per organisation per hour and per client IP per day; the relay holds one assistant key,
 * i.e. one organisation, so the organisation window is shared by every reader of the site.
 */
export interface LimitRule {
  /** Names the limit in the 429 body ("organisation", "ip"). */
  name: string;
  limit: number;
  windowMs: number;
}

export interface Hit {
  key: string;
  rule: LimitRule;
}

export type TakeResult = { ok: true } | { ok: false; rule: LimitRule; retryAfterMs: number };

interface Window {
  end: number;
  count: number;
}

export class FixedWindowLimiter {
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Count one request against every hit, or none: a request refused by one limit consumes no
   * budget of the others (else one flooding IP would also spend the organisation's hour).
   * Only admitted requests create entries, so the map is bounded by the admitted traffic.
   */
  take(hits: readonly Hit[]): TakeResult {
    const now = this.now();
    this.sweep(now);
    let refused: { rule: LimitRule; retryAfterMs: number } | null = null;
    for (const h of hits) {
      const w = this.current(h, now);
      if (w !== null && w.count >= h.rule.limit) {
        const retryAfterMs = w.end - now;
        if (refused === null || retryAfterMs > refused.retryAfterMs) refused = { rule: h.rule, retryAfterMs };
      }
    }
    if (refused !== null) return { ok: false, ...refused };
    for (const h of hits) {
      const w = this.current(h, now);
      if (w === null) this.windows.set(h.key, { end: now + h.rule.windowMs, count: 1 });
      else w.count++;
    }
    return { ok: true };
  }

  /** Entries held (for tests: bounded memory). */
  get size(): number {
    return this.windows.size;
  }

  private current(h: Hit, now: number): Window | null {
    const w = this.windows.get(h.key);
    return w !== undefined && now < w.end ? w : null;
  }

  // Drop ended windows at most once a minute (a full scan is O(entries); once a minute is cheap).
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [k, w] of this.windows) if (now >= w.end) this.windows.delete(k);
  }
}
