import { createHash } from 'node:crypto';
import { open, readFile, stat, truncate } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { VerificationError } from '../errors.js';
import { atomicWriteFile, fsyncDir } from '../util/fsx.js';
import { withLock, type LockOptions } from './lock.js';
import { storePaths } from './paths.js';

/**
 * The audit trail (issue 14): STORE/audit.log, one JSON line per event, each carrying the sha256
 * of the line before it (a hash chain), and STORE/audit.head with the count, the last line's hash
 * and the log's length, so deleting or editing a line, or cutting the tail, is detected. Appends
 * happen under the store lock; the line is fsynced before the head is replaced (temp, fsync,
 * rename), so a crash leaves either the old head (and at most one complete new line, adopted by
 * the next append) or torn bytes after the acknowledged length, which the next append removes
 * and records. Every store keeps one (with or without a trust policy); read-only commands never
 * create it, and a refused import into a store that does not exist yet creates neither.
 */
export const GENESIS = '0'.repeat(64);
/** One line is a few hundred bytes; a longer one is not ours. */
export const MAX_LINE_BYTES = 64 * 1024;

export interface AuditEvent {
  command: string;
  /** imported, unchanged, refused, activated, rolled-back, pruned, policy-init, policy-rotated, repaired, verified */
  outcome: string;
  /** The rule's stable code for a refusal (or an override), else null. */
  reason?: string | null;
  package?: string | null;
  packageSha256?: string | null;
  domain?: string | null;
  version?: string | null;
  signers?: string[];
  detail?: string | null;
}
export interface AuditLine extends Required<AuditEvent> { n: number; time: string; user: string; prevHash: string }

const HeadSchema = z.object({ count: z.number().int().nonnegative(), hash: z.string().regex(/^[0-9a-f]{64}$/), size: z.number().int().nonnegative() }).strict();
type Head = z.infer<typeof HeadSchema>;

export function auditPaths(store: string) {
  return { log: join(storePaths(store).root, 'audit.log'), head: join(storePaths(store).root, 'audit.head') };
}

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid:${process.getuid?.() ?? '?'}`;
  }
}

const broken = (store: string, why: string, extra: Record<string, unknown> = {}) =>
  new VerificationError('AIRLOCK_AUDIT_BROKEN', `audit log of store ${store} is broken: ${why}`, { subject: auditPaths(store).log, ...extra });

async function readHead(path: string): Promise<Head | null> {
  const raw = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (raw === null) return null;
  let parsed: unknown;
  try {
    parsed = raw.length <= 1024 ? JSON.parse(raw) : null;
  } catch {
    parsed = null;
  }
  const r = HeadSchema.safeParse(parsed);
  if (!r.success) throw new VerificationError('AIRLOCK_AUDIT_BROKEN', `${path} is damaged`, { subject: path });
  return r.data;
}

/** Parse one line and check it follows `prevHash` as line `n`; returns its hash or why not. */
function checkLine(text: string, n: number, prevHash: string): { hash: string; line: AuditLine } | string {
  if (Buffer.byteLength(text) > MAX_LINE_BYTES) return `line ${n} is longer than ${MAX_LINE_BYTES} bytes`;
  let line: AuditLine;
  try {
    line = JSON.parse(text) as AuditLine;
  } catch {
    return `line ${n} is not JSON (edited or torn)`;
  }
  if (typeof line !== 'object' || line === null || line.n !== n) return `line ${n} is numbered ${JSON.stringify((line as { n?: unknown } | null)?.n)} (a line was deleted or inserted)`;
  if (line.prevHash !== prevHash) return `line ${n} does not follow line ${n - 1} (prevHash differs: a line before it was edited or deleted)`;
  return { hash: sha(text), line };
}

export interface AuditReport { ok: boolean; lines: number; head: Head | null; lastHash: string; problem: string | null; pending: boolean }

/**
 * Check the whole chain against the head (read only). Breaks: a line that does not parse or does
 * not follow its predecessor (edited, deleted, inserted), fewer lines or bytes than the head
 * acknowledged (truncated tail), a last acknowledged line whose hash differs from the head (last
 * line edited), torn bytes after the last line. One complete, chained line past the head is a
 * crash between the two writes of an append, not a break (`pending`).
 */
export async function verifyAudit(store: string): Promise<AuditReport> {
  const p = auditPaths(store);
  const head = await readHead(p.head);
  const bytes = await readFile(p.log).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  const fail = (lines: number, lastHash: string, problem: string): AuditReport => ({ ok: false, lines, head, lastHash, problem, pending: false });
  if (bytes === null) return head ? fail(0, GENESIS, `${p.log} is missing but ${p.head} acknowledges ${head.count} lines`) : { ok: true, lines: 0, head, lastHash: GENESIS, problem: null, pending: false };
  if (!head) return fail(0, GENESIS, `${p.head} is missing`);
  let pos = 0;
  let n = 0;
  let prev = GENESIS;
  while (pos < bytes.length) {
    const end = bytes.indexOf(0x0a, pos);
    if (end < 0) return fail(n, prev, `torn bytes after line ${n} (byte ${pos}): an append was cut short, or the tail was edited`);
    const text = bytes.subarray(pos, end).toString('utf8');
    const r = checkLine(text, n + 1, prev);
    if (typeof r === 'string') return fail(n, prev, r);
    n++;
    prev = r.hash;
    pos = end + 1;
    if (n === head.count) {
      if (r.hash !== head.hash || pos !== head.size) return fail(n, prev, `line ${n}, the last acknowledged one, does not match ${p.head} (edited)`);
    }
  }
  if (n < head.count || pos < head.size) return fail(n, prev, `the log holds ${n} lines but ${head.count} were acknowledged (truncated tail)`);
  if (n > head.count + 1) return fail(n, prev, `the log holds ${n - head.count} lines past the ${head.count} acknowledged (appended behind airlock's back)`);
  return { ok: true, lines: n, head, lastHash: prev, problem: null, pending: n === head.count + 1 };
}

/**
 * The head and the log's length, refusing (exit 4) a log that lost its head, its file or bytes it
 * had acknowledged. Import calls it before committing, so a version never goes in unrecorded.
 */
export async function auditWritable(store: string): Promise<{ head: Head; size: number | null }> {
  const p = auditPaths(store);
  const head = await readHead(p.head);
  const size = await stat(p.log).then((s) => s.size, (err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (head === null && size !== null && size > 0) throw broken(store, `${p.head} is missing; check it with airlock audit verify`);
  if (head !== null && size === null) throw broken(store, `${p.log} is missing but ${p.head} acknowledges ${head.count} lines`);
  const h = head ?? { count: 0, hash: GENESIS, size: 0 };
  if (size !== null && size < h.size) throw broken(store, `it is ${size} bytes but ${h.size} were acknowledged (truncated); check it with airlock audit verify`);
  return { head: h, size };
}

/** Append one event; the caller holds the store lock. Returns the line written. */
export async function appendAuditLocked(store: string, event: AuditEvent): Promise<AuditLine> {
  const p = auditPaths(store);
  const ready = await auditWritable(store);
  let head = ready.head;
  const size = ready.size;
  let repaired: string | null = null;
  if (size !== null && size > head.size) {
    // A crash between the line and the head: adopt one complete chained line, drop torn bytes.
    const fh = await open(p.log, 'r');
    const extra = Buffer.alloc(Math.min(size - head.size, MAX_LINE_BYTES + 2));
    try {
      await fh.read(extra, 0, extra.length, head.size);
    } finally {
      await fh.close();
    }
    const end = extra.indexOf(0x0a);
    const r = end >= 0 && head.size + end + 1 === size ? checkLine(extra.subarray(0, end).toString('utf8'), head.count + 1, head.hash) : null;
    if (r && typeof r !== 'string') {
      head = { count: head.count + 1, hash: r.hash, size };
    } else {
      await truncate(p.log, head.size);
      repaired = `removed ${size - head.size} unacknowledged bytes after line ${head.count} (an append cut short by a crash)`;
    }
  }
  if (repaired) head = await writeLine(store, head, { command: 'audit', outcome: 'repaired', reason: 'AIRLOCK_AUDIT_TORN', detail: repaired });
  const line = await writeLine(store, head, event);
  return line as unknown as AuditLine;

  async function writeLine(s: string, h: Head, e: AuditEvent): Promise<Head & AuditLine> {
    const line: AuditLine = {
      n: h.count + 1, time: new Date().toISOString(), user: osUser(), command: e.command, outcome: e.outcome, reason: e.reason ?? null,
      package: e.package ?? null, packageSha256: e.packageSha256 ?? null, domain: e.domain ?? null, version: e.version ?? null,
      signers: e.signers ?? [], detail: e.detail ?? null, prevHash: h.hash,
    };
    const text = JSON.stringify(line);
    const data = Buffer.from(text + '\n', 'utf8');
    const fh = await open(auditPaths(s).log, 'a', 0o644);
    try {
      let done = 0;
      while (done < data.length) done += (await fh.write(data, done, data.length - done)).bytesWritten;
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (h.count === 0) await fsyncDir(storePaths(s).root);
    const next: Head = { count: line.n, hash: sha(text), size: h.size + data.length };
    await atomicWriteFile(auditPaths(s).head, JSON.stringify(next) + '\n');
    return { ...line, ...next };
  }
}

/** Append one event, taking the store lock. */
export async function appendAudit(store: string, event: AuditEvent, o?: LockOptions): Promise<AuditLine> {
  return withLock(store, () => appendAuditLocked(store, event), o);
}

/** Every line (read only), for `audit show`; at most `limit` from the end. */
export async function readAudit(store: string, limit = 1000): Promise<AuditLine[]> {
  const bytes = await readFile(auditPaths(store).log).catch(() => Buffer.alloc(0));
  const out: AuditLine[] = [];
  for (const text of bytes.toString('utf8').split('\n').slice(0, -1).slice(-limit)) {
    try {
      out.push(JSON.parse(text) as AuditLine);
    } catch {
      out.push({ n: -1, time: '', user: '', command: '', outcome: 'unreadable', reason: null, package: null, packageSha256: null, domain: null, version: null, signers: [], detail: text.slice(0, 200), prevHash: '' });
    }
  }
  return out;
}
