import { VERSION_LABEL } from '../package/index.js';
import type { MirrorVersion } from './versions.js';

/**
 * Mirror job ids name a stored version: `mv_<label>` (pure). The mirror keeps no job table — a
 * version is immutable, so its "export" is always complete — and a job id is parsed strictly:
 * anything but the prefix plus a valid version label (no "/", no leading ".", no "%") is not a
 * job, so a job id can never reach the file system as a path (path traversal through ids).
 */
const PREFIX = 'mv_';

export const jobIdFor = (label: string): string => PREFIX + label;

export function labelOfJob(jobId: string): string | null {
  if (!jobId.startsWith(PREFIX)) return null;
  const label = jobId.slice(PREFIX.length);
  return VERSION_LABEL.test(label) ? label : null;
}

/**
 * The job as the published API shows a finished export: exactly `{jobId, status, progress,
 * pageCount, createdAt, updatedAt, error}`, `error` null (a stored version never failed).
 */
export function jobView(v: MirrorVersion, pageCount: number): Record<string, unknown> {
  return {
    jobId: jobIdFor(v.label),
    status: 'completed',
    progress: 100,
    pageCount,
    createdAt: v.importedAt,
    updatedAt: v.importedAt,
    error: null,
  };
}
