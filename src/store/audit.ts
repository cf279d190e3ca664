/**
 * The audit trail's commands' face (`airlock audit`, the store's index, tests): the log itself is
 * in audit/ — files.ts (its files and line types), chain.ts (verify), append.ts, learn.ts (what it
 * says the store has had), tail.ts and show.ts (`audit show`). Modules of the store import the one
 * file they use.
 */
export { auditPaths, type AuditEvent, type AuditLine } from './audit/files.js';
export { verifyAudit, type AuditReport } from './audit/chain.js';
export { appendAudit } from './audit/append.js';
export { readAudit, readAuditTail } from './audit/tail.js';
