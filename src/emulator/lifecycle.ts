/**
 * The live service's export job lifecycle as a pure function of time: queued, then running with
 * progress 0–100 and a growing page count, then completed (or failed, for a failing domain).
 * Computing the view from the clock instead of timers means no background work to clean up.
 */
export interface Timings {
  queuedMs: number;
  runningMs: number;
}
export const DEFAULT_TIMINGS: Timings = { queuedMs: 300, runningMs: 1200 };

export interface JobRecord {
  jobId: string;
  domain: string;
  createdAt: number;
  fail: boolean;
  pages: number | null;
  /** The optional request fields, recorded (the emulator always exports the whole fixture site). */
  version?: string;
  paths?: string[];
}

/** The job record exactly as the published API shows it: these seven keys, no more, no fewer. */
export interface JobView {
  jobId: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  progress: number;
  pageCount: number;
  createdAt: string;
  updatedAt: string;
  error: string | null;
}

export function jobView(j: JobRecord, now: number, t: Timings): JobView {
  const createdAt = new Date(j.createdAt).toISOString();
  const view = (status: JobView['status'], progress: number, pageCount: number, updatedAt: string, error: string | null = null): JobView => ({
    jobId: j.jobId,
    status,
    progress,
    pageCount,
    createdAt,
    updatedAt,
    error,
  });
  // A served archive (tests) has no page list: its count is unknown, and the API has no null for it.
  const pages = j.pages ?? 0;
  const age = now - j.createdAt;
  const at = (ms: number) => new Date(j.createdAt + ms).toISOString();
  if (age < t.queuedMs) return view('queued', 0, 0, createdAt);
  const runAge = age - t.queuedMs;
  // A failing domain fails halfway through the run, as a broken build would.
  const failAt = t.runningMs / 2;
  if (j.fail && runAge >= failAt) {
    return view('failed', 50, Math.floor(pages / 2), at(t.queuedMs + failAt), `export failed: build of ${j.domain} exited with code 1`);
  }
  if (runAge < t.runningMs) {
    const progress = Math.min(99, Math.floor((100 * runAge) / t.runningMs));
    return view('running', progress, Math.floor((pages * progress) / 100), at(t.queuedMs + runAge));
  }
  return view('completed', 100, pages, at(t.queuedMs + t.runningMs));
}
