import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { airlock } from '../helpers/bin.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, type TestKey } from './helpers.js';
import { installPolicy, signBytes, signedPackage, storeDigest } from './trust-helpers.js';
import { pair } from '../helpers/multisig.js';
import { importPackage } from '../../src/store/import.js';
import { activate, rollback } from '../../src/store/activate.js';
import { readAudit, verifyAudit } from '../../src/store/audit.js';
import { readState } from '../../src/store/state.js';
import { loadPolicy, loadPolicyChain, newPolicy } from '../../src/store/policy.js';
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

/** Run an ES module script in a fresh node (bounded). */
const spawnSyncNode = (script: string) => spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });

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
  /**
   * A real SIGKILL of a process running trust init or trust rotate, at each write of the change:
   * after its staged copy, after its audit line (head renamed), after its chain entry, after its
   * policy.json. Before the line nothing happened; from the line on the change happened, every
   * reader sees it at once, and the next policy change writes out what the crash left unwritten.
   */
  const crashAt = async (store: string, call: string, target: string, before = false): Promise<void> => {
    const dist = (m: string) => JSON.stringify(fileURLToPath(new URL(`../../dist/src/store/${m}`, import.meta.url)));
    const script = `import fsp from 'node:fs/promises';
      import { syncBuiltinESMExports } from 'node:module';
      const rename = fsp.rename;
      fsp.rename = async (a, b) => {
        if (${before} && b.endsWith(${JSON.stringify(target)})) process.kill(process.pid, 'SIGKILL');
        await rename(a, b);
        if (b.endsWith(${JSON.stringify(target)})) process.kill(process.pid, 'SIGKILL');
      };
      syncBuiltinESMExports();
      const ops = await import(${dist('trust-ops.js')});
      ${call}`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.once('exit', (c, sg) => r([c, sg])));
    expect(signal, `${target}: exit ${code}: ${stderr}`).toBe('SIGKILL');
  };

  it('readers outside the lock never call a store broken while another process changes its policy (trust init, then rotations)', async () => {
    const store = join(dir, `s${++n}`);
    const alice = { name: 'alice', ...pair() };
    const policies = Array.from({ length: 8 }, (_, i) => newPolicy({ keys: [{ name: 'alice', pem: alice.pem }], threshold: 1, serial: i + 1 }));
    const sigs = policies.map((p) => signBytes(p, [alice.priv])[0]!.toString('base64'));
    const calls = policies
      .map((p, i) =>
        i === 0
          ? `await ops.initPolicy(${JSON.stringify(store)}, Buffer.from(${JSON.stringify(p.toString('base64'))}, 'base64'), []);`
          : `await ops.rotatePolicy(${JSON.stringify(store)}, ops.readNewPolicy(Buffer.from(${JSON.stringify(p.toString('base64'))}, 'base64'), [Buffer.from(${JSON.stringify(sigs[i])}, 'base64')], 'p'));`,
      )
      .join('\n');
    const dist = JSON.stringify(fileURLToPath(new URL('../../dist/src/store/trust-ops.js', import.meta.url)));
    const child = spawn(process.execPath, ['--input-type=module', '-e', `const ops = await import(${dist});\n${calls}`], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    let done = false;
    void exited.then(() => (done = true));
    const seen = new Set<number>();
    for (let reads = 0; !done && reads < 5000; reads++) {
      const c = await loadPolicyChain(store).catch((err: unknown) => err);
      expect(c instanceof Error ? (c as Error).message : null).toBeNull();
      if (c && !(c instanceof Error)) seen.add((c as { serials: number[] }).serials.length);
    }
    expect(await exited).toBe(0);
    expect((await loadPolicyChain(store))!.serials).toHaveLength(8);
    expect(seen.size).toBeGreaterThan(0); // the reads did overlap the changes
  }, 60_000);

  it('a staged copy edited, stripped of its signatures, or planted over a policy already written: never written into the chain, never removed by a refusal; a copy of what is written is ignored', async () => {
    const [alice, bob, carol] = ['alice', 'bob', 'carol'].map((name) => ({ name, ...pair() }));
    const next = newPolicy({ keys: [bob!, carol!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 2 });
    const sig = signBytes(next, [alice!.priv])[0]!;
    const b64 = (b: Buffer) => JSON.stringify(b.toString('base64'));
    const crashedRotation = async () => {
      const store = join(dir, `s${++n}`);
      await installPolicy(store, [alice!, bob!], 1);
      await crashAt(
        store,
        `await ops.rotatePolicy(${JSON.stringify(store)}, ops.readNewPolicy(Buffer.from(${b64(next)}, 'base64'), [Buffer.from(${b64(sig)}, 'base64')], 'next'));`,
        'audit.head',
      );
      await rm(join(store, 'lock'), { force: true }); // the killed process's lock: any writer takes it over
      return store;
    };
    const third = newPolicy({ keys: [carol!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 3 });
    const staged = (store: string) => join(store, 'trust', 'staged.json');
    for (const tamper of [
      (env: { signatures: string[]; policy: string }) => ({ ...env, signatures: [] }), // stripped: policy 1 never signed it
      (env: { signatures: string[]; policy: string }) => ({ ...env, policy: env.policy.replace('"default": 1', '"default": 2') }), // edited: not the bytes the line accepted
    ]) {
      const store = await crashedRotation();
      await writeFile(staged(store), JSON.stringify(tamper(JSON.parse(await readFile(staged(store), 'utf8')))));
      const before = await storeDigest(store);
      const planted = await readFile(staged(store));
      // Named as what it is (not a lost copy to make again): there, but not what the log accepted or not accepted by policy 1.
      await expect(loadPolicyChain(store)).rejects.toMatchObject({
        code: 'AIRLOCK_POLICY_BROKEN',
        exitCode: 4,
        message: expect.stringMatching(/staged\.json (is there but is not the policy the log accepted|was not accepted by policy 1)/),
      });
      await expect(rotatePolicy(store, readNewPolicy(third, signBytes(third, [bob!.priv]), 'third'))).rejects.toMatchObject({ exitCode: 4 });
      expect(await storeDigest(store)).toBe(before);
      expect(await readFile(staged(store))).toEqual(planted);
      expect(existsSync(join(store, 'trust', 'chain', '00000002.json'))).toBe(false);
    }
    // A staged copy of the policy already written out (unsigned): ignored; the chain and policy.json stand.
    const store = join(dir, `s${++n}`);
    await installPolicy(store, [alice!, bob!], 1);
    await rotatePolicy(store, readNewPolicy(next, [sig], 'next'));
    const policyJson = await readFile(join(store, 'trust', 'policy.json'));
    await writeFile(staged(store), JSON.stringify({ format: 'airlock-signed-policy/1', policy: next.toString('utf8'), signatures: [] }));
    expect((await loadPolicyChain(store))!.serials).toEqual([1, 2]);
    // A byte-equal copy of the last entry (a crash after the chain write, before the staged copy went): a refused rotation leaves it as it is.
    await writeFile(staged(store), await readFile(join(store, 'trust', 'chain', '00000002.json')));
    const leftover = await storeDigest(store);
    await expect(rotatePolicy(store, readNewPolicy(next, [sig], 'next'))).rejects.toMatchObject({ code: 'AIRLOCK_POLICY_REPLAY' });
    expect(await storeDigest(store)).toBe(leftover);
    await rotatePolicy(store, readNewPolicy(third, signBytes(third, [bob!.priv]), 'third'));
    expect((await loadPolicyChain(store))!.serials).toEqual([1, 2, 3]);
    expect(await readFile(join(store, 'trust', 'chain', '00000002.json'))).toEqual(policyJson);
  }, 60_000);

  it('an append on a line a crash left past its head acknowledges that line first: killed before its own head, the log holds one line past its head, never two', async () => {
    const store = join(dir, `s${++n}`);
    // What the crash of the command creating a store leaves: its first line, no head, nothing else.
    const first = join(dir, `s${++n}`);
    await mkdir(first);
    const audit = JSON.stringify(fileURLToPath(new URL('../../dist/src/store/audit.js', import.meta.url)));
    expect(spawnSyncNode(`const a = await import(${audit}); await a.appendAudit(${JSON.stringify(first)}, { command: 'test', outcome: 'ok' });`).status).toBe(
      0,
    );
    await mkdir(store);
    await writeFile(join(store, 'audit.log'), await readFile(join(first, 'audit.log')));
    // The next append, killed just before it renames the head that would acknowledge its own line (count 2).
    const script = `import fsp from 'node:fs/promises';
      import { readFileSync } from 'node:fs';
      import { syncBuiltinESMExports } from 'node:module';
      const rename = fsp.rename;
      fsp.rename = async (a, b) => {
        if (b.endsWith('audit.head') && JSON.parse(readFileSync(a, 'utf8')).count === 2) process.kill(process.pid, 'SIGKILL');
        await rename(a, b);
      };
      syncBuiltinESMExports();
      const a = await import(${audit});
      await a.appendAudit(${JSON.stringify(store)}, { command: 'test', outcome: 'second' });`;
    const r = spawnSyncNode(script);
    expect(r.signal).toBe('SIGKILL');
    await rm(join(store, 'lock'), { force: true });
    expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 2, pending: true });
    await expect(importPackage(pkgs.v1!, { store, trust: [key.pub] })).resolves.toMatchObject({ status: 'imported' });
    expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 3, pending: false });
  }, 60_000);

  it('the staged copy a crash left is lost: the same rotation again restores it (recorded as restored); another policy, or signatures its predecessor does not accept, are refused and change nothing', async () => {
    const [alice, bob, carol] = ['alice', 'bob', 'carol'].map((name) => ({ name, ...pair() }));
    const next = newPolicy({ keys: [bob!, carol!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 2 });
    const sig = signBytes(next, [alice!.priv])[0]!;
    const b64 = (b: Buffer) => JSON.stringify(b.toString('base64'));
    const store = join(dir, `s${++n}`);
    await installPolicy(store, [alice!, bob!], 1);
    await crashAt(
      store,
      `await ops.rotatePolicy(${JSON.stringify(store)}, ops.readNewPolicy(Buffer.from(${b64(next)}, 'base64'), [Buffer.from(${b64(sig)}, 'base64')], 'next'));`,
      'audit.head',
    );
    await rm(join(store, 'lock'), { force: true });
    await rm(join(store, 'trust', 'staged.json'));
    await expect(loadPolicyChain(store)).rejects.toMatchObject({
      code: 'AIRLOCK_POLICY_BROKEN',
      message: expect.stringContaining('running that trust rotate again'),
    });
    const before = await storeDigest(store);
    // Another policy with serial 2 (one byte differs), or the same one signed by carol (not in policy 1): refused, nothing written.
    const other = newPolicy({ keys: [bob!, carol!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 2, serial: 2 });
    await expect(rotatePolicy(store, readNewPolicy(other, signBytes(other, [alice!.priv]), 'other'))).rejects.toMatchObject({ exitCode: 4 });
    await expect(rotatePolicy(store, readNewPolicy(next, signBytes(next, [carol!.priv]), 'next'))).rejects.toMatchObject({ exitCode: 4 });
    expect(await storeDigest(store)).toBe(before);
    // The same rotation: written out, recorded as restored, and the store goes on from it.
    await expect(rotatePolicy(store, readNewPolicy(next, [sig], 'next'))).resolves.toMatchObject({
      previous: 1,
      serial: 2,
      signers: ['alice'],
      restored: true,
    });
    expect((await loadPolicyChain(store))!.serials).toEqual([1, 2]);
    expect((await readAudit(store)).at(-1)).toMatchObject({ command: 'trust rotate', outcome: 'policy-restored' });
    expect(existsSync(join(store, 'trust', 'staged.json'))).toBe(false);
    await expect(rotatePolicy(store, readNewPolicy(next, [sig], 'next'))).rejects.toMatchObject({ code: 'AIRLOCK_POLICY_REPLAY' });
    const third = newPolicy({ keys: [carol!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 3 });
    await rotatePolicy(store, readNewPolicy(third, signBytes(third, [bob!.priv]), 'third'));
    expect((await loadPolicyChain(store))!.serials).toEqual([1, 2, 3]);
    expect(await verifyAudit(store)).toMatchObject({ ok: true });
  }, 60_000);

  for (const [point, target, happened, before] of [
    ['its staged copy', 'staged.json', false],
    ['its audit line, before its head', 'audit.head', true, true],
    ['its audit line', 'audit.head', true],
    ['its chain entry', '.json', true],
    ['its policy.json', 'policy.json', true],
  ] as const) {
    it(`trust init and trust rotate killed (SIGKILL) right after ${point}: ${happened ? 'the change stands, every reader sees it, the next change writes it out' : 'nothing happened'}`, async () => {
      const [alice, bob, carol] = ['alice', 'bob', 'carol'].map((name) => ({ name, ...pair() }));
      const b64 = (b: Buffer) => JSON.stringify(b.toString('base64'));
      // trust init into a new store
      const init = join(dir, `s${++n}`);
      const first = newPolicy({ keys: [alice!, bob!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1 });
      // the chain entry of init is chain/00000001.json; the target '.json' is the first of these files renamed after the line
      const entry = target === '.json' ? '00000001.json' : target;
      // init creates the store: killed between its first line and its head, it leaves a log with no head in a store holding nothing else
      await crashAt(init, `await ops.initPolicy(${JSON.stringify(init)}, Buffer.from(${b64(first)}, 'base64'), []);`, entry, before === true);
      expect(await verifyAudit(init)).toMatchObject({ ok: true });
      expect((await loadPolicyChain(init))?.serials ?? [], point).toEqual(happened ? [1] : []);
      if (happened) {
        // The next policy change on the store init created goes on from what the crash left (a first line without its head adopted before anything is written).
        const second = newPolicy({ keys: [carol!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 2 });
        await rotatePolicy(init, readNewPolicy(second, signBytes(second, [alice!.priv]), 'second'));
        expect((await loadPolicyChain(init))!.serials, point).toEqual([1, 2]);
        expect(await verifyAudit(init), point).toMatchObject({ ok: true });
      }
      // trust rotate on a store with policy 1
      const rot = join(dir, `s${++n}`);
      await installPolicy(rot, [alice!, bob!], 1);
      const next = newPolicy({ keys: [bob!, carol!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 2 });
      const sig = signBytes(next, [alice!.priv])[0]!;
      await crashAt(
        rot,
        `await ops.rotatePolicy(${JSON.stringify(rot)}, ops.readNewPolicy(Buffer.from(${b64(next)}, 'base64'), [Buffer.from(${b64(sig)}, 'base64')], 'next'));`,
        target === '.json' ? '00000002.json' : target,
        before === true,
      );
      expect(await verifyAudit(rot)).toMatchObject({ ok: true });
      expect((await loadPolicyChain(rot))!.serials, point).toEqual(happened ? [1, 2] : [1]);
      // Imports go by the policy in force: carol (only in policy 2) is admitted exactly when the rotation happened.
      const byCarol = importPackage(await signedPackage(dir, 'v1', [carol!]), { store: rot, trust: [] });
      if (happened) await expect(byCarol).resolves.toMatchObject({ status: 'imported' });
      else await expect(byCarol).rejects.toMatchObject({ exitCode: 4 });
      // The next change writes out what the crash left and goes on from it.
      const third = newPolicy({ keys: [carol!].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: happened ? 3 : 2 });
      await rotatePolicy(rot, readNewPolicy(third, signBytes(third, [happened ? bob!.priv : alice!.priv]), 'third'));
      expect((await loadPolicyChain(rot))!.serials).toEqual(happened ? [1, 2, 3] : [1, 2]);
      expect(existsSync(join(rot, 'trust', 'staged.json'))).toBe(false);
      expect(existsSync(join(rot, 'trust', 'chain', happened ? '00000003.json' : '00000002.json'))).toBe(true);
      expect(await verifyAudit(rot)).toMatchObject({ ok: true });
    }, 60_000);
  }

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
