import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { sign } from 'node:crypto';
import { importPackage } from '../../src/store/import.js';
import { readAudit } from '../../src/store/audit.js';
import { admitPackage } from '../../src/store/admit.js';
import { storedPackage } from '../../src/store/rebuilt-package.js';
import { addSignature, fingerprint, readPackage } from '../../src/package/index.js';
import { addDeltaSignature, makeDelta, readDelta } from '../../src/delta/index.js';
import { openFile, readMembers } from '../../src/delta/members.js';
import { DELTA_ORDER } from '../../src/delta/reader.js';
import { writeMembers, type MemberBody } from '../../src/delta/write.js';
import { makeTempDir } from './helpers.js';
import { treeDigest } from './helpers.js';
import { pair } from '../helpers/multisig.js';
import { installPolicy, signedPackage, type Named } from './trust-helpers.js';
import { auditCount, expectRefusalLogged } from './audit-expect.js';
import { airlock } from '../helpers/bin.js';
import { mutants } from '../helpers/mutate.js';
import { toAirlockError } from '../../src/errors.js';
import { cp } from 'node:fs/promises';
import { verifyAudit } from '../../src/store/audit.js';

/**
 * Trust policy and delta packages: a delta carries every signature of its target manifest (target.json.sig,
 * target.json.sig.2 …), and a store with a trust policy admits it exactly as it would the full
 * target package: threshold of distinct live keys, freshness, audit line. The delta's own manifest
 * must be signed by a live key of the policy.
 */
let dir: string;
const named = (name: string): Named => ({ name, ...pair() });
const [alice, bob, carol, dave] = [named('alice'), named('bob'), named('carol'), named('dave')];
let v1: string;
let v3: string;
let delta: string; // v1 -> v2, made with alice's key: envelope and target signed by alice only
let full: string;
let n = 0;
const imp = (pkg: string, store: string) => importPackage(pkg, { store, trust: [], lockTimeoutMs: 10_000 });
const fp = (...ks: Named[]) => ks.map((k) => fingerprint(k.pub)).sort();

beforeAll(async () => {
  dir = await makeTempDir('airlock-delta-policy-');
  v1 = await signedPackage(dir, 'v1', [alice, bob], { sequence: 1000 });
  const v2 = await signedPackage(dir, 'v2', [alice, bob], { sequence: 2000 });
  v3 = await signedPackage(dir, 'v3', [alice, bob], { sequence: 3000 });
  ({ delta, full } = await makeDelta({ oldPkg: v1, newPkg: v2, outDir: join(dir, 'out'), signKey: alice.priv }));
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A 2-of-3 store (alice, bob, carol) holding v1. */
async function policyStore(): Promise<string> {
  const store = join(dir, `s${++n}`);
  await installPolicy(store, [alice, bob, carol], 2);
  expect((await imp(v1, store)).status).toBe('imported');
  return store;
}

/** A copy of the delta (and its full package beside it), so signing it leaves the original alone. */
async function copyDelta(): Promise<{ delta: string; full: string }> {
  const out = join(dir, `copy${++n}`);
  await mkdir(out);
  const d = join(out, 'docs.example.com-v2.delta.airlock');
  const f = join(out, 'docs.example.com-v2.full.airlock');
  await copyFile(delta, d);
  await copyFile(full, f);
  return { delta: d, full: f };
}

/** Rewrite a delta with exactly these target signature members (names given or numbered) and, optionally, other manifest bytes. */
async function rewrite(
  from: string,
  out: string,
  o: { targetSigs?: Buffer[]; names?: string[]; manifest?: Buffer; envelopeSig?: Buffer | null },
): Promise<string> {
  const { fh, size } = await openFile(from, 'delta');
  const members = await readMembers(fh, size, DELTA_ORDER, 'delta').finally(() => fh.close());
  const l = await readDelta(from);
  const body = (name: string): MemberBody => ({ file: from, offset: members.get(name)!.offset, size: members.get(name)!.size });
  const list: { name: string; body: MemberBody }[] = [{ name: 'airlock.json', body: o.manifest ? { bytes: o.manifest } : body('airlock.json') }];
  const env = o.envelopeSig === undefined ? l.signature : o.envelopeSig;
  if (env) list.push({ name: 'airlock.json.sig', body: { bytes: env } });
  list.push({ name: 'ops.json.gz', body: body('ops.json.gz') }, { name: 'target.json.gz', body: body('target.json.gz') });
  (o.targetSigs ?? l.target.signatures).forEach((s, i) =>
    list.push({ name: o.names?.[i] ?? (i === 0 ? 'target.json.sig' : `target.json.sig.${i + 1}`), body: { bytes: s } }),
  );
  list.push({ name: 'payload.gz', body: body('payload.gz') });
  await writeMembers(out, list, new Date(0));
  return out;
}

/** Import must refuse with exit 4 and `code`, the store unchanged but for one well-formed refusal line. */
async function refused(pkg: string, store: string, code: string): Promise<void> {
  const before = await treeDigest(store);
  const lines = await auditCount(store);
  await expect(imp(pkg, store)).rejects.toMatchObject({ code, exitCode: 4 });
  expect(await treeDigest(store)).toBe(before);
  const line = await expectRefusalLogged(store, lines, code);
  expect(line).toMatchObject({ domain: 'docs.example.com', version: 'v2' });
}

describe('delta packages under a trust policy', () => {
  it('an old-style delta (one target signature, target.json.sig) stays readable', async () => {
    const l = await readDelta(delta);
    expect(l.target.signatures).toHaveLength(1);
    expect(l.target.signature).toEqual(l.target.signatures[0]);
  });

  it('delta signed by too few keys under a 2-of-3 policy: refused (AIRLOCK_THRESHOLD), store unchanged, refusal logged', async () => {
    const store = await policyStore();
    await refused(delta, store, 'AIRLOCK_THRESHOLD');
  });

  it('two signers of the target (airlock sign DELTA): admitted exactly as the full target package would be', async () => {
    const store = await policyStore();
    const c = await copyDelta();
    const r = await addDeltaSignature(c.delta, bob.priv);
    expect(r).toMatchObject({ added: true, signatures: 2, envelopeSigned: false, full: c.full });
    expect(await addDeltaSignature(c.delta, bob.priv)).toMatchObject({ added: false, signatures: 2 }); // a key signs once
    // The same two signatures on the full package: what the store would decide for it.
    await addSignature(c.full, bob.priv);
    const asFull = await admitPackage(store, await readPackage(c.full), { trust: [] });
    const got = await imp(c.delta, store);
    expect(got).toMatchObject({ version: 'v2', status: 'imported', signers: asFull.signers, overridden: [] });
    expect(got.signers).toEqual(fp(alice, bob));
    const last = (await readAudit(store)).at(-1)!;
    expect(last).toMatchObject({ command: 'import', outcome: 'imported', version: 'v2', signers: fp(alice, bob) });
    expect(last.detail).toMatch(/^sequence \d+; delta from v1; policy 1: 2 of 2 signer\(s\) \(alice, bob\)/);
    // The stored package carries both target signatures; each verifies with stock openssl.
    const sl = await readPackage((await storedPackage(store, 'v2')).path);
    expect(sl.signatures).toHaveLength(2);
    await writeFile(join(dir, 'm.json'), sl.manifestBytes);
    for (const [i, k] of [alice, bob].entries()) {
      await writeFile(join(dir, `k${i}.pub`), k.pem);
      await writeFile(join(dir, `s${i}.sig`), sl.signatures[i]!);
      execFileSync('openssl', [
        'pkeyutl',
        '-verify',
        '-pubin',
        '-inkey',
        join(dir, `k${i}.pub`),
        '-rawin',
        '-in',
        join(dir, 'm.json'),
        '-sigfile',
        join(dir, `s${i}.sig`),
      ]);
    }
  });

  it('duplicate target signatures by one key count once: refused under 2-of-3', async () => {
    const store = await policyStore();
    const l = await readDelta(delta);
    const dup = await rewrite(delta, join(dir, 'dup.delta.airlock'), {
      targetSigs: [l.target.signatures[0]!, l.target.signatures[0]!, l.target.signatures[0]!],
    });
    await refused(dup, store, 'AIRLOCK_THRESHOLD');
  });

  it('a target signature by a key outside the policy counts for nothing', async () => {
    const store = await policyStore();
    const tm = (await readPackage(full)).manifestBytes;
    const l = await readDelta(delta);
    const stranger = await rewrite(delta, join(dir, 'stranger.delta.airlock'), { targetSigs: [l.target.signatures[0]!, sign(null, tm, dave.priv)] });
    await refused(stranger, store, 'AIRLOCK_THRESHOLD');
  });

  it('delta whose target signatures are valid but whose delta envelope was edited: refused (AIRLOCK_UNTRUSTED_SIGNATURE)', async () => {
    const store = await policyStore();
    const c = await copyDelta();
    await addDeltaSignature(c.delta, bob.priv);
    const l = await readDelta(c.delta);
    const env = JSON.parse(l.manifestBytes.toString('utf8')) as Record<string, unknown>;
    env.createdAt = '2020-01-01T00:00:00.000Z';
    const edited = await rewrite(c.delta, join(dir, 'edited.delta.airlock'), { manifest: Buffer.from(JSON.stringify(env) + '\n') });
    expect((await readDelta(edited)).target.signatures).toHaveLength(2);
    await refused(edited, store, 'AIRLOCK_UNTRUSTED_SIGNATURE');
    // Re-signed by a key outside the policy, or unsigned: the same.
    const resigned = await rewrite(c.delta, join(dir, 'resigned.delta.airlock'), {
      manifest: Buffer.from(JSON.stringify(env) + '\n'),
      envelopeSig: sign(null, Buffer.from(JSON.stringify(env) + '\n'), dave.priv),
    });
    await refused(resigned, store, 'AIRLOCK_UNTRUSTED_SIGNATURE');
    const unsigned = await rewrite(c.delta, join(dir, 'unsigned-env.delta.airlock'), { envelopeSig: null });
    await refused(unsigned, store, 'AIRLOCK_UNTRUSTED_SIGNATURE');
  });

  it('delta replay (older sequence than one imported): refused (AIRLOCK_DOWNGRADE)', async () => {
    const store = await policyStore();
    expect((await imp(v3, store)).status).toBe('imported');
    const c = await copyDelta();
    await addDeltaSignature(c.delta, bob.priv);
    await refused(c.delta, store, 'AIRLOCK_DOWNGRADE');
    // --allow-downgrade imports it anyway, and the line says so.
    expect(await importPackage(c.delta, { store, trust: [], allowDowngrade: true })).toMatchObject({ status: 'imported', overridden: ['AIRLOCK_DOWNGRADE'] });
    expect((await readAudit(store)).at(-1)).toMatchObject({ outcome: 'imported', reason: 'AIRLOCK_ALLOW_DOWNGRADE' });
  });

  it('thousands of target signature members: refused (bounded, exit 4); a gap in their numbering too', async () => {
    const store = await policyStore();
    const l = await readDelta(delta);
    const many = await rewrite(delta, join(dir, 'many.delta.airlock'), { targetSigs: Array.from({ length: 2000 }, () => l.target.signatures[0]!) });
    const before = await treeDigest(store);
    const lines = await auditCount(store);
    const t0 = Date.now();
    await expect(imp(many, store)).rejects.toMatchObject({ code: 'AIRLOCK_PACKAGE_MEMBERS', exitCode: 4 });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await treeDigest(store)).toBe(before);
    await expectRefusalLogged(store, lines, 'AIRLOCK_PACKAGE_MEMBERS');
    const gap = await rewrite(delta, join(dir, 'gap.delta.airlock'), {
      targetSigs: [l.target.signatures[0]!, l.target.signatures[0]!],
      names: ['target.json.sig', 'target.json.sig.3'],
    });
    await expect(readDelta(gap)).rejects.toMatchObject({ code: 'AIRLOCK_PACKAGE_MEMBERS', exitCode: 4 });
    const short = await rewrite(delta, join(dir, 'short.delta.airlock'), { targetSigs: [Buffer.alloc(63)] });
    await expect(readDelta(short)).rejects.toMatchObject({ code: 'AIRLOCK_BAD_SIGNATURE', exitCode: 4 });
  });

  it('airlock sign DELTA signs the target manifest read from the full package beside it; a full that is not the target is refused', async () => {
    const c = await copyDelta();
    await writeFile(join(dir, 'bob.key'), bob.priv.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const r = airlock(['sign', c.delta, '--key', join(dir, 'bob.key'), '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, kind: 'delta', added: true, signatures: 2, signer: fingerprint(bob.pub) });
    const wrong = airlock(['sign', c.delta, '--key', join(dir, 'bob.key'), '--full', v3]);
    expect(wrong.status).toBe(4);
    expect(wrong.stderr).toContain('[AIRLOCK_DELTA_TARGET]');
    await rm(c.full);
    const missing = airlock(['sign', c.delta, '--key', join(dir, 'bob.key')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('--full FILE');
    const store = await policyStore();
    // verify --store: the delta's own manifest under the policy (not --trust), read only.
    const before = await treeDigest(store, { all: true });
    const v = airlock(['verify', c.delta, '--store', store, '--json']);
    expect(v.status, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({
      ok: true,
      kind: 'delta',
      signer: fingerprint(alice.pub),
      targetSignatures: 2,
      decision: { rule: 'policy', policySerial: 1 },
    });
    const edited = await rewrite(c.delta, join(dir, 'verify-unsigned.delta.airlock'), { envelopeSig: null });
    const bad = airlock(['verify', edited, '--store', store]);
    expect(bad.status).toBe(4);
    expect(bad.stderr).toContain('[AIRLOCK_UNTRUSTED_SIGNATURE]');
    expect(await treeDigest(store, { all: true })).toBe(before);
    const imported = airlock(['import', c.delta, '--store', store, '--no-precompress', '--json']);
    expect(imported.status, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ version: 'v2', status: 'imported', signers: fp(alice, bob) });
  });

  it('an unsigned delta gets the delta manifest signed too by airlock sign; then it reaches the threshold with a second signer', async () => {
    const out = join(dir, 'unsigned-out');
    const made = await makeDelta({ oldPkg: v1, newPkg: await signedPackage(dir, 'v2', [], { sequence: 2500 }), outDir: out });
    expect((await readDelta(made.delta)).signature).toBeNull();
    expect(await addDeltaSignature(made.delta, carol.priv)).toMatchObject({ added: true, envelopeSigned: true, signatures: 1 });
    expect(await addDeltaSignature(made.delta, bob.priv)).toMatchObject({ added: true, envelopeSigned: false, signatures: 2 });
    const store = await policyStore();
    expect(await imp(made.delta, store)).toMatchObject({ status: 'imported', signers: fp(bob, carol) });
  });
});

describe('delta packages without a policy: freshness and the audit log too', () => {
  it('a delta replay into a flat store is refused as a downgrade and logged; the delta import itself is logged', async () => {
    const store = join(dir, `flat${++n}`);
    await mkdir(join(store, 'trusted-keys'), { recursive: true });
    await writeFile(join(store, 'trusted-keys', 'alice.pub'), alice.pem);
    expect((await imp(v1, store)).status).toBe('imported');
    const c = await copyDelta();
    expect((await imp(c.delta, store)).status).toBe('imported');
    expect((await readAudit(store)).at(-1)).toMatchObject({
      outcome: 'imported',
      version: 'v2',
      detail: expect.stringMatching(/^sequence \d+; delta from v1; no trust policy: signed by a trusted key$/),
    });
    const other = join(dir, `flat${++n}`);
    await mkdir(join(other, 'trusted-keys'), { recursive: true });
    await writeFile(join(other, 'trusted-keys', 'alice.pub'), alice.pem);
    await imp(v1, other);
    await imp(v3, other);
    const before = await treeDigest(other);
    const lines = await auditCount(other);
    await expect(imp(c.delta, other)).rejects.toMatchObject({ code: 'AIRLOCK_DOWNGRADE', exitCode: 4 });
    expect(await treeDigest(other)).toBe(before);
    await expectRefusalLogged(other, lines, 'AIRLOCK_DOWNGRADE');
  });
});

describe('multi-signed delta fuzz under a 2-of-3 policy (bounded)', () => {
  const MUTANTS = 60;
  it(`${MUTANTS} byte mutants of the members before the payload (headers, both manifests, every signature): the target exactly, or exit 4 with the store unchanged but for one refusal line`, async () => {
    const pristine = await policyStore();
    const before = await treeDigest(pristine);
    const lines = await auditCount(pristine);
    const c = await copyDelta();
    await addDeltaSignature(c.delta, bob.priv);
    const good = await readFile(c.delta);
    const l = await readDelta(c.delta);
    const head = good.subarray(0, l.payload.offset - 512);
    const tail = good.subarray(l.payload.offset - 512);
    let refusedCount = 0;
    for (const m of mutants(head, MUTANTS, 0x1414)) {
      const what = `mutant #${m.index} (${m.mutation} at ${m.at})`;
      const pkg = join(dir, `fz-${m.index}.delta.airlock`);
      const store = join(dir, `fz-store-${m.index}`);
      await writeFile(pkg, Buffer.concat([m.bytes, tail]));
      await cp(pristine, store, { recursive: true });
      try {
        const r = await importPackage(pkg, { store, trust: [], lockTimeoutMs: 10_000 });
        expect(r.status, what).toBe('imported');
        // Admitted: it must be exactly the two-signed target (both signatures), nothing else.
        const stored = await readPackage((await storedPackage(store, 'v2')).path);
        expect(stored.manifestBytes.equals((await readPackage(c.full)).manifestBytes), what).toBe(true);
        expect(r.signers, what).toEqual(fp(alice, bob));
      } catch (err) {
        const e = toAirlockError(err);
        if (e.exitCode !== 4 || e.code === 'AIRLOCK_INTERNAL') throw new Error(`${what}: import exited ${e.exitCode} ${e.code}: ${e.message}`, { cause: err });
        refusedCount++;
        expect(await treeDigest(store), `${what}: store changed`).toBe(before);
        expect(await auditCount(store), `${what}: one refusal line`).toBe(lines + 1);
        expect((await verifyAudit(store)).ok, `${what}: audit chain`).toBe(true);
      } finally {
        await rm(store, { recursive: true, force: true });
        await rm(pkg, { force: true });
      }
    }
    expect(refusedCount).toBeGreaterThan(MUTANTS / 2);
  }, 180_000);
});
