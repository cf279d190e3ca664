import cliProgress from 'cli-progress';
import type { FetchEvent } from './fetch.js';

/** Human bytes, binary units (what `ls -lh` and curl print). */
export function fmtBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/**
 * Plain-line throttle for logs (stderr not a TTY): a line when the phase changes, when the
 * percentage crosses the next 10 %, or every 2 s — never a flood in a CI log. Pure.
 */
export class LineThrottle {
  private last = -Infinity;
  private lastDecile = -1;
  private phase = '';
  constructor(private readonly everyMs = 2000) {}
  take(phase: string, percent: number | undefined, now: number): boolean {
    const decile = percent === undefined ? -1 : Math.floor(percent / 10);
    const due = phase !== this.phase || decile > this.lastDecile || now - this.last >= this.everyMs;
    if (due) { this.phase = phase; this.last = now; this.lastDecile = decile; }
    return due;
  }
}

export interface Reporter { onEvent(e: FetchEvent): void; stop(): void }

/** Progress on stderr: bars on a TTY (cli-progress), throttled plain lines otherwise. */
export function createReporter(stream: NodeJS.WritableStream, interactive: boolean, now: () => number = Date.now): Reporter {
  const lines = new LineThrottle();
  let bar: cliProgress.SingleBar | undefined;
  let barPhase = '';
  let dlStart = 0;
  let dlFrom = 0;
  const write = (s: string) => stream.write(s + '\n');
  const rate = (bytes: number) => { const s = (now() - dlStart) / 1000; return s > 0 ? `${fmtBytes((bytes - dlFrom) / s)}/s` : ''; };
  const ensureBar = (phase: string, format: string, total: number) => {
    if (barPhase === phase && bar) return bar;
    bar?.stop();
    barPhase = phase;
    bar = new cliProgress.SingleBar({ format, stream: stream as NodeJS.WriteStream, hideCursor: true, clearOnComplete: false, barsize: 30 }, cliProgress.Presets.shades_classic);
    bar.start(total, 0, {});
    return bar;
  };
  return {
    onEvent(e) {
      if (e.type === 'job') write(`export job ${e.jobId}${e.reused ? ' (reused)' : ' started'}`);
      else if (e.type === 'status') {
        const { status, progress, pageCount } = e.job;
        const pages = pageCount ?? 0;
        if (interactive) ensureBar('job', 'export   [{bar}] {percentage}% | {pages} pages | {status}', 100).update(progress ?? (status === 'completed' ? 100 : 0), { pages, status });
        else if (lines.take(`job:${status}`, progress, now())) write(`export ${status} ${progress ?? 0}% (${pages} pages)`);
      } else if (e.type === 'download') {
        const { bytes, total, resumedFrom } = e.progress;
        if (!dlStart) { dlStart = now(); dlFrom = resumedFrom; if (resumedFrom > 0) write(`resuming download at ${fmtBytes(resumedFrom)}`); }
        const pct = total ? Math.floor((100 * bytes) / total) : undefined;
        if (interactive) {
          ensureBar('download', 'download [{bar}] {percentage}% | {got} of {size} | {rate}', total ?? bytes)
            .update(bytes, { got: fmtBytes(bytes), size: total ? fmtBytes(total) : '?', rate: rate(bytes) });
        } else if (lines.take('download', pct, now())) write(`download ${fmtBytes(bytes)}${total ? ` of ${fmtBytes(total)} (${pct}%)` : ''} ${rate(bytes)}`);
      } else if (e.type === 'verify') {
        bar?.stop(); bar = undefined; barPhase = '';
        write('verifying archive (safety rules, digests)');
      } else if (e.type === 'written') write(`wrote ${e.path}`);
    },
    stop() { bar?.stop(); bar = undefined; },
  };
}
