import { expect } from 'vitest';
import { readAudit, verifyAudit, type AuditLine } from '../../src/store/audit.js';

/** Trust policy: how many lines the store's audit log holds now (0 without a log). */
export async function auditCount(store: string): Promise<number> {
  return (await readAudit(store, 1_000_000)).length;
}

/**
 * A refusal left exactly one new, well-formed line in the audit log: outcome "refused" with the
 * rule's code, and the hash chain still verifies. Returns that line.
 */
export async function expectRefusalLogged(store: string, before: number, code: string | RegExp, command = 'import'): Promise<AuditLine> {
  const lines = await readAudit(store, 1_000_000);
  expect(lines.length, 'one refusal line appended').toBe(before + 1);
  const last = lines[lines.length - 1]!;
  expect(last).toMatchObject({ n: before + 1, command, outcome: 'refused' });
  if (typeof code === 'string') expect(last.reason).toBe(code);
  else expect(last.reason).toMatch(code);
  expect(last.time).toMatch(/^\d{4}-\d\d-\d\dT/);
  expect(typeof last.user).toBe('string');
  expect(last.prevHash).toMatch(/^[0-9a-f]{64}$/);
  expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: before + 1, pending: false });
  return last;
}

/** Nothing at all was appended (a refusal before the store existed, or a read-only command). */
export async function expectNothingLogged(store: string, before: number): Promise<void> {
  expect(await auditCount(store)).toBe(before);
}
