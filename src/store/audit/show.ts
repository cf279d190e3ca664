import type { AuditLine } from './files.js';

/** `audit show` keeps at most this many bytes of lines (the last ones); older lines are left out. */
export const MAX_SHOW_BYTES = 64 * 1024 * 1024;

/** A line `audit show` cannot print as one: shown as `unreadable`, with its first bytes. */
export const unreadable = (detail: string): AuditLine => ({
  n: -1,
  time: '',
  user: '',
  command: '',
  outcome: 'unreadable',
  reason: null,
  package: null,
  packageSha256: null,
  domain: null,
  version: null,
  signers: [],
  detail,
  prevHash: '',
});

/** A parsed line as `audit show` can print it: every field of its type, else unreadable. */
export function asLine(v: unknown, text: string): AuditLine {
  const o = v as Record<string, unknown> | null;
  const str = (x: unknown) => (typeof x === 'string' ? x : null);
  if (typeof o !== 'object' || o === null || Array.isArray(o) || typeof o.n !== 'number') return unreadable(text.slice(0, 200));
  return {
    n: o.n,
    time: str(o.time) ?? '',
    user: str(o.user) ?? '',
    command: str(o.command) ?? '',
    outcome: str(o.outcome) ?? '',
    reason: str(o.reason),
    package: str(o.package),
    packageSha256: str(o.packageSha256),
    domain: str(o.domain),
    version: str(o.version),
    signers: Array.isArray(o.signers) ? o.signers.filter((x): x is string => typeof x === 'string') : [],
    detail: str(o.detail),
    prevHash: str(o.prevHash) ?? '',
  };
}
