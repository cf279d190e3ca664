import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { userInfo } from 'node:os';
import { AirlockError } from '../../errors.js';
import { atomicWriteFile, describeFsError, fsyncDir, openRegularFileIfExists } from '../../util/fsx.js';
import { withLock, type LockOptions } from '../lock.js';
import { storePaths } from '../paths.js';
import { scanChain } from './chain.js';
import { auditPaths, broken, NOFOLLOW, openLog, type AuditEvent, type AuditLine, type Head } from './files.js';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid:${process.getuid?.() ?? '?'}`;
  }
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
  // A line a crash left past the head is acknowledged before another follows it: killed between
  // this line and its head, the log must still hold at most one line past its head.
  if (s.pending) await writeHead(store, head);
  if (s.torn) {
    const log = await openLog(store, constants.O_WRONLY);
    if (!log) throw broken(store, `${auditPaths(store).log} disappeared while being repaired`);
    try {
      await log.fh.truncate(s.end);
      await log.fh.sync();
    } finally {
      await log.fh.close();
    }
    head = await writeLine(store, head, {
      command: 'audit',
      outcome: 'repaired',
      reason: 'AIRLOCK_AUDIT_TORN',
      detail: `removed ${s.torn} unacknowledged bytes after line ${s.lines} (sha256 ${s.tornSha256 ?? '?'}; an append cut short by a crash)`,
    });
  }
  return writeLine(store, head, event);
}

/**
 * Adopt now a complete line past the head (or a first line with no head) that a crash left
 * unacknowledged: write the head that covers it (caller holds the lock). For a change that writes
 * records before its own line (a policy change writing out the one a crash cut short): once the
 * store holds them, a first line without its head would no longer pass for a crash's leftover.
 */
export async function acknowledgePending(store: string): Promise<void> {
  const s = await scanChain(store);
  if (s.problem) throw broken(store, `${s.problem}; check it with airlock audit verify`, { line: s.line });
  if (s.pending) await writeHead(store, { count: s.lines, hash: s.lastHash, size: s.end });
}

const writeHead = (store: string, h: Head) => atomicWriteFile(auditPaths(store).head, JSON.stringify(h) + '\n');

/** Write one line after `h` (fsynced), then the new head (temp, fsync, rename). */
async function writeLine(store: string, h: Head, e: AuditEvent): Promise<Head & AuditLine> {
  const p = auditPaths(store);
  const line: AuditLine = {
    n: h.count + 1,
    time: new Date().toISOString(),
    user: osUser(),
    command: e.command,
    outcome: e.outcome,
    reason: e.reason ?? null,
    package: e.package ?? null,
    packageSha256: e.packageSha256 ?? null,
    domain: e.domain ?? null,
    version: e.version ?? null,
    signers: e.signers ?? [],
    detail: e.detail ?? null,
    prevHash: h.hash,
  };
  const text = JSON.stringify(line);
  const data = Buffer.from(text + '\n', 'utf8');
  const log = await openRegularFileIfExists(
    p.log,
    (why) => broken(store, `${p.log} ${why}`),
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW,
  );
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
  await writeHead(store, next);
  return { ...line, ...next };
}

/**
 * A change whose line `line` was written did not take effect (the write after it failed): record
 * that, so the log never claims a change the store does not hold. Best effort: when even this
 * line cannot be written, the caller's error still stands.
 */
export async function auditNotApplied(store: string, line: AuditLine, err: unknown, what?: string): Promise<void> {
  const code =
    err instanceof AirlockError
      ? err.code
      : typeof (err as NodeJS.ErrnoException)?.code === 'string'
        ? (err as NodeJS.ErrnoException).code!
        : 'AIRLOCK_INTERNAL';
  const why = err instanceof AirlockError ? err.message : describeFsError(err);
  await appendAuditLocked(store, {
    command: line.command,
    outcome: 'failed',
    reason: code,
    package: line.package,
    packageSha256: line.packageSha256,
    domain: line.domain,
    version: line.version,
    signers: line.signers,
    detail: `line ${line.n} (${line.outcome}) did not take effect${what ? ` for ${what}` : ''}: ${why}`.slice(0, 2000),
  }).catch(() => {});
}

/** Append one event, taking the store lock. */
export async function appendAudit(store: string, event: AuditEvent, o?: LockOptions): Promise<AuditLine> {
  return withLock(store, () => appendAuditLocked(store, event), o);
}
