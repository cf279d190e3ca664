import { UsageError } from '../errors.js';
import { VERSION_LABEL } from '../package/manifest.js';

/**
 * The version label when --version-label is not given: the job's creation time in UTC,
 * `YYYYMMDD-HHMMSS` (sorts by time, and the same job gives the same label on a re-run), else
 * `job-<id>` reduced to the CONTRACT's label alphabet.
 */
export function deriveVersionLabel(job: { jobId: string; createdAt?: string }, now: Date = new Date()): string {
  const t = job.createdAt ? new Date(job.createdAt) : undefined;
  if (t && !Number.isNaN(t.getTime())) return t.toISOString().replace(/\.\d+Z$/, '').replace(/[-:]/g, '').replace('T', '-');
  const safe = `job-${job.jobId}`.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 64);
  return VERSION_LABEL.test(safe) ? safe : now.toISOString().replace(/\.\d+Z$/, '').replace(/[-:]/g, '').replace('T', '-');
}

/**
 * The domain names a file (`<domain>-<version>.airlock`), so it must be a plain host name: no
 * separators, no dot segments (path traversal via --domain).
 */
const HOST = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export function checkDomain(domain: string): string {
  if (!HOST.test(domain)) throw new UsageError(`invalid --domain ${JSON.stringify(domain)}: must be a host name like docs.example.com`, { subject: '--domain' });
  return domain;
}

export function checkLabel(v: string): string {
  if (!VERSION_LABEL.test(v)) throw new UsageError(`invalid --version-label ${JSON.stringify(v)}: must match ${VERSION_LABEL.source}`, { subject: '--version-label' });
  return v;
}
