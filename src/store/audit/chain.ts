import { hash } from 'node:crypto';
import { crashLeftover, holdsRecords } from './traces.js';
import { auditPaths, broken, GENESIS, MAX_LINE_BYTES, openLog, readHead, type AuditLine, type Head } from './files.js';
import { learn, newHistory, type AuditHistory } from './learn.js';
import { readLines } from './lines.js';
import { lockedByOther } from '../lock.js';
import { recordsState, SETTLE_MS } from '../settle.js';

/** The chain: checking every line against the one before it and the head (verify, and before every append). */

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
  if (typeof line !== 'object' || line === null || line.n !== n)
    return `line ${n} is numbered ${JSON.stringify(line?.n ?? null)} (a line was deleted, inserted, duplicated or moved)`;
  if (line.prevHash !== prevHash) return `line ${n} does not follow line ${n - 1} (prevHash differs: line ${n - 1} or one before it was edited or deleted)`;
  return null;
}

/** What a full pass over the chain found (read only). */
export interface Scan {
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
  /** Their SHA-256 (the repair records it), when there are any. */
  tornSha256?: string;
  /** What the chained lines say the store has had: see AuditHistory. */
  history: AuditHistory;
  /** A new store's first line with no head yet, while another live process holds the store lock. */
  awaitingHead?: boolean;
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
export async function scanChain(store: string): Promise<Scan> {
  // Outside the lock (verify, trust show, an admission before the lock) another process may append
  // while this reads: a line past the head, a log before its first head, a line half written. Such
  // a view is only trusted as a break once the files held still for a whole pass; under the lock
  // nothing moves, and a real break (a stable file) costs two stats more.
  const headDue = Date.now() + SETTLE_MS;
  for (let attempt = 1; ; attempt++) {
    const before = await recordsState(store);
    const s = await scanOnce(store);
    if (s.awaitingHead) {
      // The lock's holder writes the head a moment after the line. A head that does not come
      // (a lock naming some other live process, with the log cut to its first line) is a break.
      if (Date.now() < headDue) {
        await new Promise((r) => setTimeout(r, 20));
        attempt -= 1;
        continue;
      }
      return { ...s, problem: `${auditPaths(store).head} is missing`, line: 1, pending: false, awaitingHead: false };
    }
    if (!s.problem && !s.torn) return s;
    if ((await recordsState(store)) === before || attempt === SETTLE_ATTEMPTS) return s;
    await new Promise((r) => setTimeout(r, 5 * attempt));
  }
}

/** Passes over a log that keeps changing under a reader before its last view is reported as is. */
const SETTLE_ATTEMPTS = 8;

async function scanOnce(store: string): Promise<Scan> {
  const p = auditPaths(store);
  const head = await readHead(store);
  const log = await openLog(store);
  const empty = (problem: string | null): Scan => ({
    head,
    lines: 0,
    lastHash: GENESIS,
    end: 0,
    problem,
    line: problem ? 1 : null,
    pending: false,
    torn: 0,
    history: newHistory(),
  });
  if (!log) {
    if (head && head.count > 0) return empty(`${p.log} is missing but ${p.head} acknowledges ${head.count} lines`);
    // Every version and every trust record enters the store after its line is written: either one without a log means the log was removed.
    const held = await holdsRecords(store);
    return empty(held ? `${p.log} is missing but the store holds ${held} (the log was removed)` : null);
  }
  try {
    // No head: a break (a log cut to its first line and its head deleted must not pass for a new
    // one), except while another live process holds the store lock (a new store's first append
    // between its two writes, seen by a reader outside the lock) or when the store holds nothing a
    // logged change leaves (the command that created it crashed between its line and its head,
    // before its change): then that first line is pending, and the next append adopts it.
    const noHead = `${p.head} is missing`;
    if (log.size === 0 && !head) {
      // A new log, unless the store already holds what only a logged change puts there.
      const held = await holdsRecords(store);
      return empty(held ? `${p.log} is empty but the store holds ${held} (the log was emptied)` : null);
    }
    const holder = !head && (await lockedByOther(store));
    // A head-less log in a store holding records is a break; its lines are still read, to report how many chain.
    const headless = !head && !holder && (await holdsRecords(store)) !== null;
    const acked: Head = head ?? { count: headless ? Number.MAX_SAFE_INTEGER : 0, hash: GENESIS, size: 0 };
    let n = 0;
    let prev = GENESIS;
    let problem: string | null = null;
    const history = newHistory();
    const read = await readLines(log.fh, {
      line(buf, start, stop, end) {
        const k = n + 1;
        if (k > acked.count + 1) {
          problem = head ? `line ${k} is past line ${head.count}, the last acknowledged in ${p.head} (a line was appended behind airlock's back)` : noHead;
          return false;
        }
        const r = checkLine(buf, start, stop, k, prev);
        if (typeof r !== 'string') {
          problem = r.problem;
          return false;
        }
        if (k === acked.count && (r !== acked.hash || end !== acked.size)) {
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
    const scan: Scan = {
      head,
      lines: n,
      lastHash: prev,
      end: read.end,
      problem,
      line: problem ? n + 1 : null,
      pending: n === acked.count + 1,
      torn: read.tail,
      history,
      awaitingHead: holder && !problem,
    };
    if (!scan.problem && read.tail) {
      const bytes = Buffer.alloc(read.tail);
      const got = (await log.fh.read(bytes, 0, read.tail, read.end)).bytesRead;
      scan.tornSha256 = hash('sha256', bytes.subarray(0, got));
      if (!crashLeftover(bytes.subarray(0, got), n + 1)) {
        scan.line = n + 1;
        scan.problem = `the ${read.tail} bytes after line ${n} (from byte ${read.end}) are not what an append cut short leaves (the start of line ${n + 1}, or zeros): they were written behind airlock's back`;
      }
    }
    if (headless) return scan.problem ? scan : { ...scan, problem: noHead, line: 1, pending: false };
    if (!scan.problem && n < acked.count) {
      scan.line = n + 1;
      scan.problem = read.tail
        ? `line ${n + 1} is cut short (torn bytes at byte ${read.end}) but ${p.head} acknowledges ${acked.count} lines`
        : `line ${n + 1} is missing: the log holds ${n} lines but ${acked.count} were acknowledged (truncated tail)`;
    }
    return scan;
  } finally {
    await log.fh.close();
  }
}

export interface AuditReport {
  ok: boolean;
  lines: number;
  head: Head | null;
  lastHash: string;
  problem: string | null;
  pending: boolean;
}

/**
 * Check the whole chain against the head (read only): see scanChain. One complete, chained line
 * past the head is a crash between the two writes of an append, not a break (`pending`); torn
 * bytes after the last line are (the next append removes and records them).
 */
export async function verifyAudit(store: string): Promise<AuditReport> {
  const s = await scanChain(store);
  const fail = (problem: string): AuditReport => ({ ok: false, lines: s.lines, head: s.head, lastHash: s.lastHash, problem, pending: false });
  if (s.problem) return fail(s.problem);
  if (s.torn) {
    const where = s.lines === 0 ? `${s.torn} torn bytes and no complete line` : `torn bytes after line ${s.lines} (from byte ${s.end})`;
    return fail(`${where}: an append was cut short, or the tail was edited`);
  }
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
