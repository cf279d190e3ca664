import { createRequire } from 'node:module';
import type CliProgress from 'cli-progress';
import { redact } from '../util/redact.js';
import { escapeControls } from '../util/terminal.js';
import { amount, type Unit } from '../util/units.js';

/**
 * Progress of every command on stderr, one way: a cli-progress bar when stderr is a TTY,
 * otherwise plain lines, at most one per 10 % crossed or per 5 s (plus a step's first and last),
 * never one per file or chunk. Log lines go through `log`, which ends a running bar first, so
 * nothing is ever glued to a bar. Sizes in binary units (KiB, MiB, GiB).
 */
/** At the first bar drawn: only a terminal shows one; a command whose stderr is a file or a pipe never loads it. */
const loadBars = (): typeof CliProgress => createRequire(import.meta.url)('cli-progress') as typeof CliProgress;

export interface ProgressOptions {
  interactive: boolean;
  now?: () => number;
  everyMs?: number;
}

/** The step being reported: its label, and what was last printed of it (decile, time, amount; its end). */
type Step = { label: string; lastDecile: number; lastAt: number; lastDone: number; printedEnd: boolean };

export class Progress {
  private bar: CliProgress.SingleBar | null = null;
  private step: Step | null = null;
  private readonly now: () => number;
  private readonly everyMs: number;

  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly o: ProgressOptions,
  ) {
    this.now = o.now ?? Date.now;
    this.everyMs = o.everyMs ?? 5000;
  }

  /** A line of its own (escaped, secrets redacted); a running bar is ended first. */
  log(line: string): void {
    this.endBar();
    this.stream.write(redact(escapeControls(line, { layout: true })) + '\n');
  }

  /** Report `done` of `total` for the step `label` (a new label starts a new step). */
  update(label: string, done: number, total: number | undefined, unit: Unit, detail = ''): void {
    if (this.step?.label !== label) this.begin(label);
    const s = this.step!;
    const text = amount(done, total, unit);
    const finished = total !== undefined && done >= total;
    if (s.printedEnd) return; // the step is complete and shown so
    if (this.o.interactive) {
      s.printedEnd = finished;
      return this.draw(label, done, total, text + detail, finished);
    }
    const decile = total ? Math.floor((10 * Math.min(done, total)) / total) : -1;
    const t = this.now();
    const due = s.lastAt < 0 || decile > s.lastDecile || (t - s.lastAt >= this.everyMs && done !== s.lastDone) || (finished && !s.printedEnd);
    if (!due) return;
    Object.assign(s, { lastDecile: decile, lastAt: t, lastDone: done, printedEnd: finished });
    this.stream.write(redact(escapeControls(`${label} ${text}${detail}`)) + '\n');
  }

  /** End the current step; its last state stays on screen. */
  end(): void {
    this.endBar();
    this.step = null;
  }

  private begin(label: string): void {
    this.end();
    this.step = { label, lastDecile: -1, lastAt: -1, lastDone: -1, printedEnd: false };
  }

  private draw(label: string, done: number, total: number | undefined, text: string, finished: boolean): void {
    if (this.bar === null) {
      const cliProgress = loadBars();
      this.bar = new cliProgress.SingleBar(
        {
          stream: this.stream as NodeJS.WriteStream,
          format: `${escapeControls(label)} [{bar}] {text}`,
          hideCursor: true,
          clearOnComplete: false,
          barsize: 30,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(total ?? Math.max(done, 1), 0, { text: '' });
    }
    if (total === undefined) this.bar.setTotal(Math.max(done, 1));
    this.bar.update(done, { text: redact(escapeControls(text)) });
    if (finished) this.endBar();
  }

  private endBar(): void {
    this.bar?.stop();
    this.bar = null;
  }
}
