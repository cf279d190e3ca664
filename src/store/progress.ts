/** What a long store operation reports while it runs (the CLI turns these into stderr lines or a bar). */
export type ProgressEvent =
  | { phase: 'lock-wait'; pid: number }
  | { phase: 'verify'; pkg: string }
  | { phase: 'copy'; bytes: number; total: number }
  | { phase: 'extract'; dir: string; total: number }
  | { phase: 'extracted'; files: number; bytes: number }
  | { phase: 'committed'; version: string }
  | { phase: 'activated'; version: string }
  | { phase: 'variants'; done: number; total: number };
