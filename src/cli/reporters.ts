import type { DownloadProgress } from '../fetch/download.js';
import type { FetchEvent } from '../fetch/fetch.js';
import type { ProgressEvent } from '../store/progress.js';
import { fmtBytes } from '../util/units.js';
import type { Progress } from './progress.js';

/**
 * What each long operation reports, turned into the shared Progress (src/cli/progress.ts): the
 * same units, throttling and bars for fetch, demo, import, preview and serve --values.
 */

/** A download: bytes of total, with the rate since it (re)started. */
export function downloadReporter(p: Progress, label = 'download', now: () => number = Date.now): (d: DownloadProgress) => void {
  let start = -1;
  return ({ bytes, total, resumedFrom }) => {
    if (start < 0) {
      start = now();
      if (resumedFrom > 0) p.log(`resuming the download at ${fmtBytes(resumedFrom)}`);
    }
    const s = (now() - start) / 1000;
    const rate = s > 0.5 ? `, ${fmtBytes((bytes - resumedFrom) / s)}/s` : '';
    p.update(label, bytes, total, 'bytes', rate);
  };
}

export function fetchReporter(p: Progress, now: () => number = Date.now): (e: FetchEvent) => void {
  const download = downloadReporter(p, 'download', now);
  return (e) => {
    switch (e.type) {
      case 'job':
        return p.log(`export job ${e.jobId}${e.reused ? ' (reused)' : ' started'}`);
      case 'status': {
        const { status, progress, pageCount } = e.job;
        const pct = progress ?? (status === 'completed' ? 100 : 0);
        return p.update(`export ${status}`, pct, 100, 'percent', `, ${pageCount ?? 0} pages`);
      }
      case 'download':
        return download(e.progress);
      case 'verify':
        return p.log('verifying the archive (safety rules, digests)');
      case 'written':
        return p.log(`wrote ${e.path}`);
    }
  };
}

export function importReporter(p: Progress): (e: ProgressEvent | { phase: 'html' }) => void {
  return (e) => {
    switch (e.phase) {
      case 'lock-wait':
        return p.log(`waiting for the store lock held by process ${e.pid}`);
      case 'verify':
        return p.log(`verifying ${e.pkg}`);
      case 'copy':
        return p.update('copying the package', e.bytes, e.total, 'bytes');
      case 'extract':
        return p.log(`extracting and checking every file digest (${fmtBytes(e.total)} archive)`);
      case 'extracted':
        return p.log(`verified ${e.files} files, ${fmtBytes(e.bytes)}`);
      case 'committed':
        return p.log(`version ${e.version} committed`);
      case 'activated':
        return p.log(`version ${e.version} is now active`);
      case 'variants':
        return p.update('precompressing', e.done, e.total, 'files');
      case 'html':
        return p.log('transforming HTML for air-gapped serving');
    }
  };
}
