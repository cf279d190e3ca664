import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { airlock } from '../helpers/bin.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, type TestKey } from './helpers.js';
import { installPolicy, signBytes, signedPackage, storeDigest } from './trust-helpers.js';
import { pair } from '../helpers/multisig.js';
import { importPackage } from '../../src/store/import.js';
import { activate, rollback } from '../../src/store/activate.js';
import { readAudit, verifyAudit } from '../../src/store/audit.js';
import { readState } from '../../src/store/state.js';
import { loadPolicy, newPolicy } from '../../src/store/policy.js';
import { readNewPolicy, rotatePolicy } from '../../src/store/trust-ops.js';

/**
 * The order of a store change and its audit line, with the failure injected in process: the log
 * breaking after the version was built, the state write failing after the line was written, the
 * seen.json write failing after the commit rename, a trust policy failing to be written after its line.
 */
const fail = vi.hoisted(() => ({ state: false, seen: false, policy: false }));
vi.mock('../../src/store/state.js', async (orig) => {
  const m = await orig<typeof import('../../src/store/state.js')>();
  return {
    ...m,
    writeState: async (...a: Parameters<typeof m.writeState>) => {
      if (fail.state) throw Object.assign(new Error('injected: the disk went away'), { code: 'EIO' });
      return m.writeState(...a);
    },
  };
});
vi.mock('../../src/store/admit.js', async (orig) => {
  const m = await orig<typeof import('../../src/store/admit.js')>();
  return {
    ...m,
    recordSeen: async (...a: Parameters<typeof m.recordSeen>) => {
      if (fail.seen) throw Object.assign(new Error('injected: the disk went away'), { code: 'EIO' });
      return m.recordSeen(...a);
    },
  };
});
vi.mock('../../src/store/policy.js', async (orig) => {
  const m = await orig<typeof import('../../src/store/policy.js')>();
  return {
    ...m,
    writePolicy: async (...a: Parameters<typeof m.writePolicy>) => {
      if (fail.policy) throw Object.assign(new Error('injected: no space left on device'), { code: 'ENOSPC' });
      return m.writePolicy(...a);
    },
  };
});

let dir: string;
let key: TestKey;
let template: string;
const pkgs: Record<string, string> = {};
let delta: string;
let n = 0;

beforeAll(async () => {
  dir = await makeTempDir('airlock-audit-commit-');
  key = await makeKey(dir);
  await writeFile(join(dir, 'signer.key'), key.priv.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  for (const v of ['v1', 'v2', 'v3']) {
    await mkdir(join(dir, v));
    pkgs[v] = await buildPackage(join(dir, v), { version: v, files: sampleSite(v, 3), key });
  }
  template = join(dir, 'template');
  await importPackage(pkgs.v1!, { store: template, trust: [key.pub], activate: true });
  await importPackage(pkgs.v2!, { store: template, trust: [key.pub] });
  const d = airlock(['delta', pkgs.v2!, pkgs.v3!, '--out', join(dir, 'delta'), '--sign-key', join(dir, 'signer.key'), '--json']);
  expect(d.status, d.stderr).toBe(0);
  delta = (JSON.parse(d.stdout) as { delta: string }).delta;
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function freshStore(): Promise<string> {
  const store = join(dir, `s${++n}`);
  await cp(template, store, { recursive: true });
  return store;
}

describe('a failed import commits', () => {
  for (const kind of ['full', 'delta'] as const) {
    it(`${kind} import whose audit.log becomes a folder after the version was built: exit 4, no version, no seen.json advance, no staging`, async () => {
      const store = await freshStore();
      const before = await storeDigest(store);
      const log = join(store, 'audit.log');
      const r = importPackage(kind === 'full' ? pkgs.v3! : delta, {
        store,
        trust: [key.pub],
        onProgress: (e) => {
          if (e.phase !== 'extracted') return;
          rmSync(log);
          mkdirSync(log); // between the checks before the work and the commit
        },
      });
      await expect(r).rejects.toMatchObject({ code: 'AIRLOCK_AUDIT_BROKEN', exitCode: 4, message: expect.stringContaining('is a folder, not a regular file') });
      expect(existsSync(join(store, 'versions', 'v3'))).toBe(false);
      expect(existsSync(join(store, 'staging'))).toBe(false);
      expect(await storeDigest(store)).toBe(before); // seen.json included
    }, 30_000);
  }

  it('seen.json cannot be written after the commit rename: the version is taken out again and a failed line says so', async () => {
    const store = await freshStore();
    const before = await storeDigest(store);
    fail.seen = true;
    try {
      await expect(importPackage(pkgs.v3!, { store, trust: [key.pub] })).rejects.toMatchObject({ code: 'EIO' });
    } finally {
      fail.seen = false;
    }
    expect(await storeDigest(store)).toBe(before);
    const lines = await readAudit(store);
    expect(lines.slice(-2).map((l) => [l.outcome, l.version, l.reason])).toEqual([
      ['imported', 'v3', null],
      ['failed', 'v3', 'EIO'],
    ]);
    expect(lines[lines.length - 1]!.detail).toMatch(new RegExp(`^line ${lines.length - 1} \\(imported\\) did not take effect`));
    expect((await verifyAudit(store)).ok).toBe(true);
  }, 30_000);
});

describe('a refused activation is applied', () => {
  for (const op of ['activate', 'rollback'] as const) {
    it(`${op}: the line is written before state.json; a state write that fails gets a failed line naming it`, async () => {
      const store = await freshStore();
      if (op === 'rollback') await activate(store, 'v2');
      const state = await readState(store);
      fail.state = true;
      try {
        await expect(op === 'activate' ? activate(store, 'v2') : rollback(store)).rejects.toMatchObject({ code: 'EIO' });
      } finally {
        fail.state = false;
      }
      expect(await readState(store)).toEqual(state);
      const lines = await readAudit(store);
      const [did, failed] = lines.slice(-2);
      expect(did).toMatchObject({ command: op, outcome: op === 'activate' ? 'activated' : 'rolled-back' });
      expect(failed).toMatchObject({ command: op, outcome: 'failed', reason: 'EIO', version: did!.version });
      expect(failed!.detail).toMatch(new RegExp(`^line ${did!.n} \\(${did!.outcome}\\) did not take effect`));
      expect((await verifyAudit(store)).ok).toBe(true);
    }, 30_000);
  }

  it('activate with a broken chain: refused before state.json is touched', async () => {
    const store = await freshStore();
    const text = await readFile(join(store, 'audit.log'), 'utf8');
    await writeFile(join(store, 'audit.log'), text.replace('"imported"', '"unchanged"'));
    const before = await storeDigest(store);
    await expect(activate(store, 'v2')).rejects.toMatchObject({ code: 'AIRLOCK_AUDIT_BROKEN', exitCode: 4, details: { line: 2 } }); // line 1 edited: line 2 no longer follows it
    expect(await storeDigest(store)).toBe(before);
  }, 30_000);
});

describe('a policy change is recorded before it is made', () => {
  it('a rotation whose policy cannot be written: its line, then a failed line taking it back; the old policy stays in force', async () => {
    const [alice, bob, carol] = ['alice', 'bob', 'carol'].map((name) => ({ name, ...pair() }));
    const store = join(dir, `s${++n}`);
    await installPolicy(store, [alice!, bob!], 1);
    const next = newPolicy({ keys: [bob!, carol!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 2 });
    fail.policy = true;
    try {
      await expect(rotatePolicy(store, readNewPolicy(next, signBytes(next, [alice!.priv]), 'next'))).rejects.toMatchObject({ code: 'ENOSPC' });
    } finally {
      fail.policy = false;
    }
    const lines = await readAudit(store);
    expect(lines.slice(-2).map((l) => l.outcome)).toEqual(['policy-rotated', 'failed']);
    expect(lines.at(-1)!.detail).toMatch(/^line \d+ \(policy-rotated\) did not take effect/);
    expect((await loadPolicy(store))!.policy.serial).toBe(1);
    expect((await importPackage(await signedPackage(dir, 'v1', [alice!]), { store, trust: [] })).status).toBe('imported');
    expect((await verifyAudit(store)).ok).toBe(true);
  });
});
