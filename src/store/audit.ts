import { createHash, hash } from 'node:crypto';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { AirlockError, VerificationError } from '../errors.js';
import { atomicWriteFile, describeFsError, fsyncDir, openRegularFileIfExists, readRegularFileIfExists } from '../util/fsx.js';
import { withLock, type LockOptions } from './lock.js';
import { storePaths } from './paths.js';

/**
 * The audit trail: STORE/audit.log, one JSON line per event, each carrying the sha256 of the line
 * before it (a hash chain), and STORE/audit.head with the count, the last line's hash and the
 * log's length, so deleting, editing, moving or adding a line, or cutting the tail, is detected.
 * Appends happen under the store lock and first verify the whole chain (streamed: fixed memory,
 * one pass, about 0.3 s per 100,000 lines), so no command ever writes after a broken chain; the
 * line is fsynced before the head is replaced (temp, fsync, rename), so a crash leaves either the
 * old head and at most one complete new line (adopted by the next append) or torn bytes after the
 * last line (no "\n", at most one line's worth), which the next append removes and records.
 * Anything else past the head is tampering: refused, never deleted.
 *
 * Commands that change the store write their line BEFORE the change becomes visible (the line
 * says what is about to happen), and a change that then fails gets a `failed` line naming it
 * (auditNotApplied). So the log never misses a change the store holds; a crash between the line
 * and the change can leave a line whose change did not happen (the store shows which).
 * Every store keeps one (with or without a trust policy); read-only commands never create it, and
 * a refused import into a store that does not exist yet creates neither.
 */
export const GENESIS = '0'.repeat(64);
/** One line is a few hundred bytes; a longer one is not ours. */
export const MAX_LINE_BYTES = 64 * 1024;

export interface AuditEvent {
  command: string;
  /** imported, unchanged, refused, activated, rolled-back, pruned, kept, failed, policy-init, policy-rotated, repaired, verified */
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

/** The refusal of every command that needs the log: exit 4, the file (and the line) at fault. */
const broken = (store: string, why: string, extra: Record<string, unknown> = {}) =>
  new VerificationError('AIRLOCK_AUDIT_BROKEN', `audit log of store ${store} is broken: ${why}`, { subject: auditPaths(store).log, ...extra });

async function readHead(store: string): Promise<Head | null> {
  const path = auditPaths(store).head;
  const raw = await readRegularFileIfExists(path, { maxBytes: 1024, noFollow: true, refuse: (why) => headBroken(store, `${path} ${why}`) });
  if (raw === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    parsed = null;
  }
  const r = HeadSchema.safeParse(parsed);
  if (!r.success || (r.data.count === 0 && (r.data.size !== 0 || r.data.hash !== GENESIS))) throw headBroken(store, `${path} is damaged`);
  return r.data;
}
const headBroken = (store: string, why: string) => broken(store, why, { subject: auditPaths(store).head });

/**
 * The audit files are the store's own regular files: a symbolic link is refused, never followed
 * (a link planted as audit.log would have every append land in a file outside the store).
 */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** Open the log for reading (null when missing): a FIFO, device, folder or symlink is refused at once, in words. */
async function openLog(store: string, flags = constants.O_RDONLY): Promise<{ fh: FileHandle; size: number } | null> {
  const path = auditPaths(store).log;
  return openRegularFileIfExists(path, (why) => broken(store, `${path} ${why}`), flags | NOFOLLOW);
}

/** Read the log in 1 MiB chunks; each line is handed over without its "\n" while it is in the buffer. */
const CHUNK = 1 << 20;
interface LineSink {
  /** A complete line of at most MAX_LINE_BYTES, `buf[start, stop)` (no Buffer made for it), ending at file offset `end` (past its "\n"); false stops. */
  line(buf: Buffer, start: number, stop: number, end: number): boolean;
  /** A line longer than MAX_LINE_BYTES (its first bytes); false stops, true skips it (to its "\n"). */
  overlong(prefix: Buffer): boolean;
}
interface LinesRead {
  /** File offset just past the last complete line handed over. */
  end: number;
  /** Bytes after that without a "\n" (at most MAX_LINE_BYTES; 0 when stopped or skipping an overlong one). */
  tail: number;
  stopped: boolean;
}

/** Every line of an open file from offset `from`, streamed in fixed memory (CHUNK + MAX_LINE_BYTES), in order. */
async function readLines(fh: FileHandle, sink: LineSink, from = 0): Promise<LinesRead> {
  const buf = Buffer.allocUnsafe(CHUNK + MAX_LINE_BYTES + 1);
  let have = 0; // bytes held in buf
  let base = from; // file offset of buf[0]
  let lastEnd = from;
  let skipping = false; // inside an overlong line already reported
  for (;;) {
    const scanFrom = have; // the bytes kept from the last round hold no "\n"
    const { bytesRead } = await fh.read(buf, have, buf.length - have, base + have);
    if (bytesRead === 0) break;
    have += bytesRead;
    const view = buf.subarray(0, have);
    let start = 0;
    for (let nl = view.indexOf(0x0a, scanFrom); nl >= 0; nl = view.indexOf(0x0a, start)) {
      const end = base + nl + 1;
      if (skipping) skipping = false;
      else if (nl - start > MAX_LINE_BYTES ? !sink.overlong(Buffer.from(view.subarray(start, start + 200))) : !sink.line(view, start, nl, end)) return { end: lastEnd, tail: 0, stopped: true };
      lastEnd = end;
      start = nl + 1;
    }
    if (!skipping && have - start > MAX_LINE_BYTES) {
      if (!sink.overlong(Buffer.from(view.subarray(start, start + 200)))) return { end: lastEnd, tail: 0, stopped: true };
      skipping = true;
    }
    if (skipping) {
      base += have;
      have = 0;
    } else {
      buf.copyWithin(0, start, have);
      base += start;
      have -= start;
    }
  }
  return { end: lastEnd, tail: skipping ? 0 : have, stopped: false };
}

const SUFFIX = ',"prevHash":"'; // then 64 hex digits and "}: how writeLine ends every line

/**
 * The line number and prevHash of a line as writeLine lays it out (`{"n":N,` … `,"prevHash":"H"}`),
 * read from its bytes without parsing it; null for any other shape (then checkLine parses it).
 * Enough for the chain: every byte of a line is covered by its hash, which the next line (or the
 * head) holds, so an edit anywhere shows as a break whatever the edited bytes parse as.
 */
function fastFields(b: Buffer, s: number, e: number): { n: number; prev: string } | null {
  if (e - s < 5 + 2 + SUFFIX.length + 66 || b[s] !== 0x7b || b[s + 1] !== 0x22 || b[s + 2] !== 0x6e || b[s + 3] !== 0x22 || b[s + 4] !== 0x3a) return null;
  let i = s + 5;
  let n = 0;
  while (i < s + 21 && b[i]! >= 0x30 && b[i]! <= 0x39) n = n * 10 + (b[i++]! - 0x30);
  if (i === s + 5 || b[i] !== 0x2c || b[e - 2] !== 0x22 || b[e - 1] !== 0x7d) return null;
  if (b.toString('latin1', e - 66 - SUFFIX.length, e - 66) !== SUFFIX) return null;
  return { n, prev: b.toString('latin1', e - 66, e - 2) };
}

/**
 * Check that `buf[start, stop)` follows `prevHash` as line `n`; returns its hash (of its exact
 * bytes) or why not. One-shot hashing and no per-line Buffer or parse on the usual path: about
 * 0.3 s per 100,000 lines, so every append can afford the whole chain.
 */
function checkLine(buf: Buffer, start: number, stop: number, n: number, prevHash: string): string | { problem: string } {
  if (stop - start > MAX_LINE_BYTES) return { problem: `line ${n} is longer than ${MAX_LINE_BYTES} bytes` };
  const f = fastFields(buf, start, stop);
  if (!f || f.n !== n || f.prev !== prevHash) {
    const why = explainLine(buf.subarray(start, stop), n, prevHash);
    if (why) return { problem: why };
  }
  return hash('sha256', new Uint8Array(buf.buffer, buf.byteOffset + start, stop - start), 'hex');
}

/** Why a line that is not laid out as writeLine writes it does not chain (null if it does). */
function explainLine(bytes: Buffer, n: number, prevHash: string): string | null {
  // JSON.stringify never writes a raw carriage return: one here means the file was rewritten (CRLF).
  if (bytes.includes(0x0d)) return `line ${n} holds a carriage return (CRLF line endings: the file was rewritten)`;
  let line: Partial<AuditLine> | null;
  try {
    line = JSON.parse(bytes.toString('utf8')) as Partial<AuditLine> | null;
  } catch {
    return `line ${n} is not JSON (edited or torn)`;
  }
  if (typeof line !== 'object' || line === null || line.n !== n) return `line ${n} is numbered ${JSON.stringify(line?.n ?? null)} (a line was deleted, inserted, duplicated or moved)`;
  if (line.prevHash !== prevHash) return `line ${n} does not follow line ${n - 1} (prevHash differs: line ${n - 1} or one before it was edited or deleted)`;
  return null;
}

/** What a full pass over the chain found (read only). */
interface Scan {
  head: Head | null;
  /** Complete lines that chain (acknowledged, plus at most one pending). */
  lines: number;
  lastHash: string;
  /** File offset just past the last chained line. */
  end: number;
  /** Why the chain is broken, and the line at fault; null when it holds. */
  problem: string | null;
  line: number | null;
  /** One complete chained line past the head: a crash between an append's two writes. */
  pending: boolean;
  /** Bytes after the last line without a "\n" (an append cut short), at most one line's worth. */
  torn: number;
  /** What the chained lines say the store has had: see AuditHistory. */
  history: AuditHistory;
}

/**
 * What a verified log says the store has had, so that a deleted or older record does not quietly
 * undo it: the highest trust policy serial accepted (0: none; `trust init` is 1, each `trust rotate`
 * names its new serial), every domain imported (seen.json must keep an order for each) and, per
 * domain, the highest sequence (packageOrder, what seen.json records) of the imports whose line
 * carries it (importLine; lines written before lines carried it name only the domain), and the
 * SHA-256 of each accepted policy's bytes, by serial, where its line records one (policyDetail).
 */
export interface AuditHistory { policySerial: number; importedDomains: Set<string>; importedSequence: Map<string, number>; policyDigests: Map<number, string> }

/** The detail of a trust init or rotate line, carrying the accepted policy's SHA-256 (learn reads it back). */
export function policyDetail(detail: string, policySha256: string): string {
  return `${detail}; policy sha256 ${policySha256}`;
}
const POLICY_SHA256 = /; policy sha256 ([0-9a-f]{64})$/;

/** The detail of an import's line, carrying the sequence seen.json is about to record (learn reads it back). */
export function importDetail(sequence: number | null, detail: string | null | undefined): string | null {
  return sequence === null ? detail ?? null : `sequence ${sequence}${detail ? `; ${detail}` : ''}`;
}
const SEQUENCE = /^sequence (\d+)(?:;|$)/;

/** How writeLine lays out the outcomes that matter to AuditHistory (JSON.stringify of AuditLine, in its key order). */
const OUTCOME = { init: Buffer.from('"outcome":"policy-init"'), rotated: Buffer.from('"outcome":"policy-rotated"'), imported: Buffer.from('"outcome":"imported"'), failed: Buffer.from('"outcome":"failed"') };

/** The history being learnt, and the last import's line (a `failed` line naming it takes its sequence back). */
interface Learning extends AuditHistory { last: { n: number; domain: string; before: number | undefined } | null }
const newHistory = (): Learning => ({ policySerial: 0, importedDomains: new Set(), importedSequence: new Map(), policyDigests: new Map(), last: null });

/** Fold one chained line into `h` (only the few lines that matter are parsed). */
function learn(h: Learning, line: Buffer): void {
  if (line.includes(OUTCOME.init)) h.policySerial = Math.max(h.policySerial, 1); // even were the rest unreadable
  if (line.includes(OUTCOME.init) || line.includes(OUTCOME.rotated) || line.includes(OUTCOME.imported) || line.includes(OUTCOME.failed)) {
    let l: Partial<AuditLine>;
    try {
      l = JSON.parse(line.toString('utf8')) as Partial<AuditLine>;
    } catch {
      return; // chained bytes that are not JSON: explainLine has already let them through as not ours to judge
    }
    if (l.outcome === 'imported' && typeof l.domain === 'string') {
      h.importedDomains.add(l.domain);
      const seq = typeof l.detail === 'string' ? SEQUENCE.exec(l.detail) : null;
      const before = h.importedSequence.get(l.domain);
      h.last = seq && typeof l.n === 'number' ? { n: l.n, domain: l.domain, before } : null;
      if (seq) h.importedSequence.set(l.domain, Math.max(before ?? 0, Number(seq[1])));
    }
    if (l.outcome === 'failed' && h.last && typeof l.detail === 'string' && l.detail.startsWith(`line ${h.last.n} (imported) did not take effect`)) {
      if (h.last.before === undefined) h.importedSequence.delete(h.last.domain);
      else h.importedSequence.set(h.last.domain, h.last.before);
      h.last = null;
    }
    const m = l.outcome === 'policy-rotated' && typeof l.detail === 'string' ? /^serial \d+ -> (\d+)\b/.exec(l.detail) : null;
    const serial = l.outcome === 'policy-init' ? 1 : m ? Number(m[1]) : 0;
    if (serial > 0) {
      h.policySerial = Math.max(h.policySerial, serial);
      const digest = typeof l.detail === 'string' ? POLICY_SHA256.exec(l.detail) : null;
      if (digest) h.policyDigests.set(serial, digest[1]!);
    }
  }
}

/**
 * Check the whole chain against the head, streaming (fixed memory; every line at most
 * MAX_LINE_BYTES). Breaks: a line that does not parse or does not follow its predecessor (edited,
 * deleted, inserted, duplicated, moved, bit-flipped, CRLF), fewer lines or bytes than the head
 * acknowledged (truncated tail), a last acknowledged line whose hash or end differs from the head
 * (last line or head edited), and any complete line past the head but the one a crash may leave
 * (appended behind airlock's back). Torn bytes after the last line are reported apart (`torn`):
 * verify calls them a break, an append repairs them and says so in the log.
 */
async function scanChain(store: string): Promise<Scan> {
  const p = auditPaths(store);
  const head = await readHead(store);
  const log = await openLog(store);
  const empty = (problem: string | null): Scan => ({ head, lines: 0, lastHash: GENESIS, end: 0, problem, line: problem ? 1 : null, pending: false, torn: 0, history: newHistory() });
  if (!log) return empty(head && head.count > 0 ? `${p.log} is missing but ${p.head} acknowledges ${head.count} lines` : null);
  try {
    if (!head) return empty(log.size > 0 ? `${p.head} is missing (check the log with airlock audit verify)` : null);
    let n = 0;
    let prev = GENESIS;
    let problem: string | null = null;
    const history = newHistory();
    const read = await readLines(log.fh, {
      line(buf, start, stop, end) {
        const k = n + 1;
        if (k > head.count + 1) {
          problem = `line ${k} is past line ${head.count}, the last acknowledged in ${p.head} (a line was appended behind airlock's back)`;
          return false;
        }
        const r = checkLine(buf, start, stop, k, prev);
        if (typeof r !== 'string') {
          problem = r.problem;
          return false;
        }
        if (k === head.count && (r !== head.hash || end !== head.size)) {
          problem = `line ${k}, the last acknowledged one, does not match ${p.head} (the line or the head was edited)`;
          return false;
        }
        n = k;
        prev = r;
        learn(history, buf.subarray(start, stop));
        return true;
      },
      overlong() {
        problem = `line ${n + 1} is longer than ${MAX_LINE_BYTES} bytes`;
        return false;
      },
    });
    const scan: Scan = { head, lines: n, lastHash: prev, end: read.end, problem, line: problem ? n + 1 : null, pending: n === head.count + 1, torn: read.tail, history };
    if (!scan.problem && n < head.count) {
      scan.line = n + 1;
      scan.problem = read.tail
        ? `line ${n + 1} is cut short (torn bytes at byte ${read.end}) but ${p.head} acknowledges ${head.count} lines`
        : `line ${n + 1} is missing: the log holds ${n} lines but ${head.count} were acknowledged (truncated tail)`;
    }
    return scan;
  } finally {
    await log.fh.close();
  }
}

export interface AuditReport { ok: boolean; lines: number; head: Head | null; lastHash: string; problem: string | null; pending: boolean }

/**
 * Check the whole chain against the head (read only): see scanChain. One complete, chained line
 * past the head is a crash between the two writes of an append, not a break (`pending`); torn
 * bytes after the last line are (the next append removes and records them).
 */
export async function verifyAudit(store: string): Promise<AuditReport> {
  const s = await scanChain(store);
  const fail = (problem: string): AuditReport => ({ ok: false, lines: s.lines, head: s.head, lastHash: s.lastHash, problem, pending: false });
  if (s.problem) return fail(s.problem);
  if (s.torn) return fail(`torn bytes after line ${s.lines} (byte ${s.end}): an append was cut short, or the tail was edited`);
  return { ok: true, lines: s.lines, head: s.head, lastHash: s.lastHash, problem: null, pending: s.pending };
}

/**
 * Refuse (exit 4, naming the line) a log whose chain does not verify: every command that changes
 * the store calls it (under the store lock) before it changes anything, so a refusal changes
 * nothing. Torn bytes after the last line are not a refusal: the append repairs and logs them.
 * Returns what the same pass learnt (AuditHistory), so a caller needs no second scan.
 */
export async function auditWritable(store: string): Promise<AuditHistory> {
  const s = await scanChain(store);
  if (s.problem) throw broken(store, `${s.problem}; check it with airlock audit verify`, { line: s.line });
  return s.history;
}

/**
 * What the store has had by its audit log (AuditHistory): a store whose trust/ folder, newest
 * chain entries or seen record are gone still remembers them here, so it never falls back to an
 * older policy, to --trust, or to no downgrade check. A log that does not verify is refused
 * (exit 4) as by auditWritable.
 */
export async function auditHistory(store: string): Promise<AuditHistory> {
  const s = await scanChain(store);
  if (s.problem) throw broken(store, `${s.problem}; check it with airlock audit verify`, { line: s.line });
  return s.history;
}

/**
 * Append one event; the caller holds the store lock. Returns the line written. The whole chain is
 * checked first (streaming): a chain that does not verify is refused (exit 4) and never altered.
 * Two things are repaired, both what a crash leaves and nothing else: one complete chained line
 * past the head (the line was written, the head not) is adopted; torn bytes after the last line
 * (no "\n", at most one line's worth) are cut and a `repaired` line records it.
 */
export async function appendAuditLocked(store: string, event: AuditEvent): Promise<AuditLine> {
  const s = await scanChain(store);
  if (s.problem) throw broken(store, `${s.problem}; check it with airlock audit verify`, { line: s.line });
  let head: Head = { count: s.lines, hash: s.lastHash, size: s.end };
  if (s.torn) {
    const log = await openLog(store, constants.O_WRONLY);
    if (!log) throw broken(store, `${auditPaths(store).log} disappeared while being repaired`);
    try {
      await log.fh.truncate(s.end);
      await log.fh.sync();
    } finally {
      await log.fh.close();
    }
    head = await writeLine(store, head, { command: 'audit', outcome: 'repaired', reason: 'AIRLOCK_AUDIT_TORN', detail: `removed ${s.torn} unacknowledged bytes after line ${s.lines} (an append cut short by a crash)` });
  }
  return writeLine(store, head, event);
}

/** Write one line after `h` (fsynced), then the new head (temp, fsync, rename). */
async function writeLine(store: string, h: Head, e: AuditEvent): Promise<Head & AuditLine> {
  const p = auditPaths(store);
  const line: AuditLine = {
    n: h.count + 1, time: new Date().toISOString(), user: osUser(), command: e.command, outcome: e.outcome, reason: e.reason ?? null,
    package: e.package ?? null, packageSha256: e.packageSha256 ?? null, domain: e.domain ?? null, version: e.version ?? null,
    signers: e.signers ?? [], detail: e.detail ?? null, prevHash: h.hash,
  };
  const text = JSON.stringify(line);
  const data = Buffer.from(text + '\n', 'utf8');
  const log = await openRegularFileIfExists(p.log, (why) => broken(store, `${p.log} ${why}`), constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW);
  if (!log) throw broken(store, `${p.log} cannot be created`);
  try {
    let done = 0;
    while (done < data.length) done += (await log.fh.write(data, done, data.length - done)).bytesWritten;
    await log.fh.sync();
  } finally {
    await log.fh.close();
  }
  if (h.count === 0) await fsyncDir(storePaths(store).root);
  const next: Head = { count: line.n, hash: sha(data.subarray(0, data.length - 1)), size: h.size + data.length };
  await atomicWriteFile(p.head, JSON.stringify(next) + '\n');
  return { ...line, ...next };
}

/**
 * A change whose line `line` was written did not take effect (the write after it failed): record
 * that, so the log never claims a change the store does not hold. Best effort: when even this
 * line cannot be written, the caller's error still stands.
 */
export async function auditNotApplied(store: string, line: AuditLine, err: unknown, what?: string): Promise<void> {
  const code = err instanceof AirlockError ? err.code : typeof (err as NodeJS.ErrnoException)?.code === 'string' ? (err as NodeJS.ErrnoException).code! : 'AIRLOCK_INTERNAL';
  const why = err instanceof AirlockError ? err.message : describeFsError(err);
  await appendAuditLocked(store, {
    command: line.command, outcome: 'failed', reason: code, package: line.package, packageSha256: line.packageSha256, domain: line.domain, version: line.version,
    signers: line.signers, detail: `line ${line.n} (${line.outcome}) did not take effect${what ? ` for ${what}` : ''}: ${why}`.slice(0, 2000),
  }).catch(() => {});
}

/** Append one event, taking the store lock. */
export async function appendAudit(store: string, event: AuditEvent, o?: LockOptions): Promise<AuditLine> {
  return withLock(store, () => appendAuditLocked(store, event), o);
}

/** `audit show` keeps at most this many bytes of lines (the last ones); older lines are left out. */
export const MAX_SHOW_BYTES = 64 * 1024 * 1024;

const unreadable = (detail: string): AuditLine => ({ n: -1, time: '', user: '', command: '', outcome: 'unreadable', reason: null, package: null, packageSha256: null, domain: null, version: null, signers: [], detail, prevHash: '' });

/** A parsed line as `audit show` can print it: every field of its type, else unreadable. */
function asLine(v: unknown, text: string): AuditLine {
  const o = v as Record<string, unknown> | null;
  const str = (x: unknown) => (typeof x === 'string' ? x : null);
  if (typeof o !== 'object' || o === null || Array.isArray(o) || typeof o.n !== 'number') return unreadable(text.slice(0, 200));
  return {
    n: o.n, time: str(o.time) ?? '', user: str(o.user) ?? '', command: str(o.command) ?? '', outcome: str(o.outcome) ?? '', reason: str(o.reason),
    package: str(o.package), packageSha256: str(o.packageSha256), domain: str(o.domain), version: str(o.version),
    signers: Array.isArray(o.signers) ? o.signers.filter((x): x is string => typeof x === 'string') : [], detail: str(o.detail), prevHash: str(o.prevHash) ?? '',
  };
}

/**
 * The last `limit` lines (read only), for `audit show`, read backwards from the log's end in
 * CHUNK reads: the work is bounded by what is shown, never by the log's size or its number of
 * lines (a log of millions of empty lines is shown at once). A line longer than MAX_LINE_BYTES is
 * one unreadable entry; reading stops there, and after MAX_SHOW_BYTES (`earlierUnread`: lines
 * before were not read; audit verify reads the whole log). A log that is not a regular file is
 * refused (exit 4). Torn bytes after the last line are not a line.
 */
export async function readAuditTail(store: string, limit = 1000): Promise<{ lines: AuditLine[]; earlierUnread: boolean }> {
  const log = await openLog(store);
  if (!log) return { lines: [], earlierUnread: false };
  const newestFirst: AuditLine[] = [];
  const add = (line: Buffer) => {
    if (line.length > MAX_LINE_BYTES) return void newestFirst.push(unreadable(`(longer than ${MAX_LINE_BYTES} bytes) ${line.toString('utf8', 0, 200).slice(0, 160)}`));
    const text = line.toString('utf8');
    let v: unknown = null;
    if (text.startsWith('{')) {
      try {
        v = JSON.parse(text);
      } catch {
        v = null;
      }
    }
    newestFirst.push(asLine(v, text));
  };
  let pos = log.size;
  let carry = Buffer.alloc(0); // the start of a line whose beginning is further back
  let tail = true; // the bytes after the last "\n" are a torn tail, not a line
  let earlierUnread = false;
  try {
    while (newestFirst.length < limit && pos > 0) {
      if (log.size - pos >= MAX_SHOW_BYTES) {
        earlierUnread = true;
        break;
      }
      const n = Math.min(CHUNK, pos);
      pos -= n;
      const chunk = Buffer.allocUnsafe(n);
      let got = 0;
      while (got < n) {
        const { bytesRead } = await log.fh.read(chunk, got, n - got, pos + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      const data = carry.length ? Buffer.concat([chunk.subarray(0, got), carry]) : chunk.subarray(0, got);
      let end = data.length;
      for (let nl = data.lastIndexOf(0x0a, end - 1); nl >= 0 && newestFirst.length < limit; nl = end > 0 ? data.lastIndexOf(0x0a, end - 1) : -1) {
        if (tail) tail = false;
        else add(data.subarray(nl + 1, end));
        end = nl;
      }
      if (newestFirst.length >= limit) break;
      carry = Buffer.from(data.subarray(0, end));
      if (pos === 0 && !tail && carry.length > 0) add(carry); // the log's first line
      else if (carry.length > MAX_LINE_BYTES) {
        // Longer than a line may be (a complete one, or bytes after the last line that verify names
        // as the next line): one unreadable entry, and nothing before it is read.
        add(carry);
        earlierUnread = pos > 0;
        break;
      }
    }
  } finally {
    await log.fh.close();
  }
  return { lines: newestFirst.reverse(), earlierUnread: earlierUnread || (pos > 0 && newestFirst.length < limit) };
}

/** Every line (read only), for `audit show` and tests; at most `limit` from the end. */
export async function readAudit(store: string, limit = 1000): Promise<AuditLine[]> {
  return (await readAuditTail(store, limit)).lines;
}
