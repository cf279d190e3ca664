import { VERSION_LABEL, timeLabel } from '../package/index.js';

export { checkDomain, checkLabel } from '../package/index.js';

/**
 * The version label when --version-label is not given: the job's creation time in UTC,
 * `YYYYMMDD-HHMMSS` (sorts by time, and the same job gives the same label on a re-run), else
 * `job-<id>` reduced to the version label alphabet.
 */
export function deriveVersionLabel(job: { jobId: string; createdAt?: string }, now: Date = new Date()): string {
  const t = job.createdAt ? new Date(job.createdAt) : undefined;
  if (t && !Number.isNaN(t.getTime()) && VERSION_LABEL.test(timeLabel(t))) return timeLabel(t);
  const safe = `job-${job.jobId}`.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 64);
  return VERSION_LABEL.test(safe) ? safe : timeLabel(now);
}
