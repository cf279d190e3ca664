import { UpstreamError } from '../errors.js';

/**
 * A slow or stalled object host must not hold a download for ever: response headers within
 * `headersTimeoutMs` (per request), at least `minBytesPerSecond` over every `rateWindowMs` (the
 * whole download, retries and their waits included), and the whole download within `totalMs`.
 * `serve --values` sets them (staticExport.download.*, docs/values, docs/mirror.md); `fetch` sets
 * the rate window (--rate-window) and uses the defaults for the rest. A part downloaded so far is
 * kept, so the next run resumes it.
 */
export interface DownloadLimits {
  headersTimeoutMs: number;
  minBytesPerSecond: number;
  rateWindowMs: number;
  totalMs: number;
}
export const DEFAULT_DOWNLOAD_LIMITS: DownloadLimits = { headersTimeoutMs: 30_000, minBytesPerSecond: 1024, rateWindowMs: 30_000, totalMs: 3_600_000 };
/** The settings a refusal names, so the user knows what to raise (none for a command without such settings). */
export interface LimitNames {
  rate?: string;
  total?: string;
  size?: string;
}

const secs = (ms: number) => `${+(ms / 1000).toFixed(3)} s`;
const rate = (bps: number) => (bps >= 1024 ? `${+(bps / 1024).toFixed(1)} KiB/s` : `${Math.floor(bps)} B/s`);

export function resolveDownloadLimits(given: Partial<DownloadLimits> | undefined): DownloadLimits {
  return { ...DEFAULT_DOWNLOAD_LIMITS, ...Object.fromEntries(Object.entries(given ?? {}).filter(([, v]) => v !== undefined)) };
}

/**
 * A signal that aborts, with an UpstreamError as its reason, when the download goes under the
 * minimum rate over a window or past the overall deadline. `seen(bytes)` reports progress.
 */
export function watchdog(l: DownloadLimits, origin: string, names?: LimitNames): { signal: AbortSignal; seen(bytes: number): void; stop(): void } {
  const ac = new AbortController();
  const t0 = performance.now();
  let bytes = 0;
  const samples: Array<{ at: number; bytes: number }> = [{ at: t0, bytes: 0 }];
  const stepMs = Math.max(10, Math.min(1_000, l.rateWindowMs / 10));
  const tick = setInterval(() => {
    const now = performance.now();
    samples.push({ at: now, bytes });
    while (samples.length > 1 && samples[1]!.at <= now - l.rateWindowMs) samples.shift();
    const first = samples[0]!;
    if (l.minBytesPerSecond > 0 && now - first.at >= l.rateWindowMs) {
      const got = bytes - first.bytes;
      const bps = got / ((now - first.at) / 1000);
      if (bps < l.minBytesPerSecond) {
        ac.abort(
          new UpstreamError(
            `the bundle download from ${origin} went under ${rate(l.minBytesPerSecond)} for ${secs(l.rateWindowMs)} (${got} bytes came in that time); gave up${names?.rate ? ` (${names.rate})` : ''}`,
            undefined,
            { subject: origin },
            'AIRLOCK_DOWNLOAD_TOO_SLOW',
          ),
        );
      }
    }
  }, stepMs);
  const deadline = setTimeout(() => {
    ac.abort(
      new UpstreamError(
        `the bundle download from ${origin} did not finish within ${secs(l.totalMs)}; gave up${names?.total ? ` (${names.total})` : ''}`,
        undefined,
        { subject: origin },
        'AIRLOCK_DOWNLOAD_TIMEOUT',
      ),
    );
  }, l.totalMs);
  tick.unref();
  deadline.unref();
  const stop = () => {
    clearInterval(tick);
    clearTimeout(deadline);
  };
  ac.signal.addEventListener('abort', stop, { once: true });
  return {
    signal: ac.signal,
    seen: (b) => {
      bytes = b;
    },
    stop,
  };
}
