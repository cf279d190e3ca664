/**
 * The live service's export job lifecycle as a pure function of time: queued, then running with
 * progress 0–100 and a growing page count, then completed (or failed, for a failing domain).
 * Computing the view from the clock instead of timers means no background work to clean up.
 */
export interface Timings { queuedMs: number; runningMs: number }
export const DEFAULT_TIMINGS: Timings = { queuedMs: 300, runningMs: 1200 };

export interface JobRecord { jobId: string; domain: string; createdAt: number; fail: boolean; pages: number | null }
export interface JobView {
  jobId: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  progress: number;
  pageCount: number | null;
  error?: string;
  createdAt: string;
  updatedAt: string;
}

export function jobView(j: JobRecord, now: number, t: Timings): JobView {
  const base = { jobId: j.jobId, createdAt: new Date(j.createdAt).toISOString() };
  const age = now - j.createdAt;
  const at = (ms: number) => new Date(j.createdAt + ms).toISOString();
  if (age < t.queuedMs) return { ...base, status: 'queued', progress: 0, pageCount: null, updatedAt: base.createdAt };
  const runAge = age - t.queuedMs;
  // A failing domain fails halfway through the run, as a broken build would.
  const failAt = t.runningMs / 2;
  if (j.fail && runAge >= failAt) {
    return { ...base, status: 'failed', progress: 50, pageCount: null, error: `export failed: build of ${j.domain} exited with code 1`, updatedAt: at(t.queuedMs + failAt) };
  }
  if (runAge < t.runningMs) {
    const progress = Math.min(99, Math.floor((100 * runAge) / t.runningMs));
    const pageCount = j.pages === null ? null : Math.floor((j.pages * progress) / 100);
    return { ...base, status: 'running', progress, pageCount, updatedAt: at(t.queuedMs + runAge) };
  }
  return { ...base, status: 'completed', progress: 100, pageCount: j.pages, updatedAt: at(t.queuedMs + t.runningMs) };
}
