import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A policy change is recorded before it is made: a trust rotate whose policy cannot be written
 * (the disk fails between the line and the files) leaves its line, then a `failed` line that
 * takes it back, and the store keeps its old policy in force instead of refusing everything.
 */
const failWrite = { on: false };
vi.mock('../../src/store/policy.js', async (original) => {
  const m = await original<typeof import('../../src/store/policy.js')>();
  return {
    ...m,
    writePolicy: async (...args: Parameters<typeof m.writePolicy>) => {
      if (failWrite.on) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      return m.writePolicy(...args);
    },
  };
});

const { importPackage } = await import('../../src/store/import.js');
const { loadPolicy, newPolicy } = await import('../../src/store/policy.js');
const { readNewPolicy, rotatePolicy } = await import('../../src/store/trust-ops.js');
const { verifyAudit, readAudit } = await import('../../src/store/audit.js');
const { makeTempDir } = await import('./helpers.js');
const { pair } = await import('../helpers/multisig.js');
const { installPolicy, signBytes, signedPackage } = await import('./trust-helpers.js');

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('airlock-trust-first-');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('trust policy: its record comes first', () => {
  it('a rotation whose policy cannot be written: its line, then a failed line taking it back; the old policy stays in force', async () => {
    const [alice, bob, carol] = ['alice', 'bob', 'carol'].map((name) => ({ name, ...pair() }));
    const store = join(dir, 's');
    await installPolicy(store, [alice!, bob!], 1);
    const next = newPolicy({ keys: [bob!, carol!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 2 });
    failWrite.on = true;
    await expect(rotatePolicy(store, readNewPolicy(next, signBytes(next, [alice!.priv]), 'next'))).rejects.toMatchObject({ code: 'ENOSPC' });
    failWrite.on = false;
    const lines = await readAudit(store);
    expect(lines.slice(-2).map((l) => l.outcome)).toEqual(['policy-rotated', 'failed']);
    expect(lines.at(-1)!.detail).toMatch(/^line \d+ \(policy-rotated\) did not take effect/);
    expect((await loadPolicy(store))!.policy.serial).toBe(1);
    expect((await importPackage(await signedPackage(dir, 'v1', [alice!]), { store, trust: [] })).status).toBe('imported');
    expect((await verifyAudit(store)).ok).toBe(true);
  });
});
