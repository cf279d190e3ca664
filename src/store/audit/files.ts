import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { VerificationError } from '../../errors.js';
import { openRegularFileIfExists, readRegularFileIfExists } from '../../util/fsx.js';
import { storePaths } from '../paths.js';

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
 *
 * This file: the log's two files, their line types, reading the head and opening the log; the
 * chain is checked in chain.ts, appended to in append.ts, read backwards for `audit show` in tail.ts.
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
export interface AuditLine extends Required<AuditEvent> {
  n: number;
  time: string;
  user: string;
  prevHash: string;
}

// A head is written after a line, so it acknowledges at least one: a head of 0 lines is never airlock's.
const HeadSchema = z.object({ count: z.number().int().positive(), hash: z.string().regex(/^[0-9a-f]{64}$/), size: z.number().int().nonnegative() }).strict();
export type Head = z.infer<typeof HeadSchema>;

export function auditPaths(store: string) {
  return { log: join(storePaths(store).root, 'audit.log'), head: join(storePaths(store).root, 'audit.head') };
}

/** The refusal of every command that needs the log: exit 4, the file (and the line) at fault. */
export const broken = (store: string, why: string, extra: Record<string, unknown> = {}) =>
  new VerificationError('AIRLOCK_AUDIT_BROKEN', `audit log of store ${store} is broken: ${why}`, { subject: auditPaths(store).log, ...extra });

export async function readHead(store: string): Promise<Head | null> {
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
  if (!r.success) {
    // airlock writes a head only after a line: one that acknowledges none was not written by it
    const record = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
    const none = record?.count === 0 && HeadSchema.safeParse({ ...record, count: 1 }).success;
    throw headBroken(store, none ? `${path} acknowledges no line (count 0), and airlock writes a head only after a line` : `${path} is damaged`);
  }
  return r.data;
}
const headBroken = (store: string, why: string) => broken(store, why, { subject: auditPaths(store).head });

/**
 * The audit files are the store's own regular files: a symbolic link is refused, never followed
 * (a link planted as audit.log would have every append land in a file outside the store).
 */
export const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** Open the log for reading (null when missing): a FIFO, device, folder or symlink is refused at once, in words. */
export async function openLog(store: string, flags = constants.O_RDONLY): Promise<{ fh: FileHandle; size: number } | null> {
  const path = auditPaths(store).log;
  return openRegularFileIfExists(path, (why) => broken(store, `${path} ${why}`), flags | NOFOLLOW);
}

/** The log is read in 1 MiB chunks, forwards (lines.ts) and backwards (tail.ts). */
export const CHUNK = 1 << 20;
