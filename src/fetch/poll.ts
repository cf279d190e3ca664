import { AirlockError, UpstreamError, UpstreamJobFailedError } from '../errors.js';
import { sanitize, type BundleLink, type ExportJob, type ServiceClient } from '../upstream/index.js';
import { sleep } from './retry.js';

/** The three calls of the export API that fetch needs (a structural type, so tests may pass a fake). */
export type ExportApi = Pick<ServiceClient, 'startExport' | 'getExport' | 'getBundle'>;

export interface PollOptions {
  intervalMs: number;
  /** Give up after this long without the job finishing. */
  timeoutMs: number;
  signal?: AbortSignal;
  onStatus?: (job: ExportJob) => void;
}

/** Poll intervals grow ×1.5 up to 8× the first one: quick for small exports, gentle for long ones. */
export function nextInterval(first: number, n: number): number {
  return Math.round(Math.min(first * 8, first * 1.5 ** n));
}

const aborted = (jobId: string) =>
  new AirlockError('AIRLOCK_INTERRUPTED', `interrupted while waiting for export job ${jobId}; run again with --job ${jobId} to continue`, 1, {
    subject: jobId,
  });

/** Poll until completed; `failed` is exit 3 with the service's own error text. */
export async function waitForJob(api: ExportApi, jobId: string, o: PollOptions): Promise<ExportJob> {
  const deadline = Date.now() + o.timeoutMs;
  for (let n = 0; ; n++) {
    const job = await api.getExport(jobId);
    o.onStatus?.(job);
    if (job.status === 'completed') return job;
    if (job.status === 'failed')
      throw new UpstreamJobFailedError(`export job ${jobId} failed upstream: ${job.error ? sanitize(job.error) : '(the service gave no reason)'}`, {
        subject: jobId,
      });
    if (Date.now() >= deadline)
      throw new UpstreamError(
        `export job ${jobId} still ${job.status} after ${Math.round(o.timeoutMs / 1000)} s`,
        undefined,
        { subject: jobId },
        'AIRLOCK_TIMEOUT',
      );
    await sleep(Math.min(nextInterval(o.intervalMs, n), Math.max(0, deadline - Date.now())), o.signal).catch(() => {
      throw aborted(jobId);
    });
  }
}

/**
 * The bundle link. A 409 right after `completed` is possible (the service may still be sealing
 * the archive): keep asking a few times before giving up.
 */
export async function bundleWhenReady(api: ExportApi, jobId: string, o: PollOptions, attempts = 10): Promise<BundleLink> {
  for (let n = 0; ; n++) {
    try {
      return await api.getBundle(jobId);
    } catch (err) {
      if (!(err instanceof UpstreamError && err.code === 'AIRLOCK_NOT_READY') || n + 1 >= attempts) throw err;
    }
    await sleep(nextInterval(o.intervalMs, n), o.signal).catch(() => {
      throw aborted(jobId);
    });
  }
}
