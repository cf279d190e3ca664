import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { importPackage } from '../../src/store/import.js';
import { activate, rollback } from '../../src/store/activate.js';
import { prune } from '../../src/store/prune.js';
import { newPolicy, loadPolicy, trustPaths, verifyChain } from '../../src/store/policy.js';
import { readNewPolicy, rotatePolicy } from '../../src/store/trust-ops.js';
import { admitPackage } from '../../src/store/admit.js';
import { verifyAudit } from '../../src/store/audit.js';
import { readPackage } from '../../src/package/reader.js';
import { fingerprint } from '../../src/package/keys.js';
import { makeTempDir, buildPackage, sampleSite } from './helpers.js';
import { auditCount, expectRefusalLogged } from './audit-expect.js';
import { pair, signaturesBy, withSignatures } from '../helpers/multisig.js';
import { installPolicy, lastAudit, signBytes, signedPackage, storeDigest, type Named } from './trust-helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('airlock-trust-');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const named = (name: string): Named => ({ name, ...pair() });
const [alice, bob, carol, dave] = [named('alice'), named('bob'), named('carol'), named('dave')];
let n = 0;
const freshStore = () => join(dir, `s${++n}`);
const imp = (pkg: string, store: string, o: { allowDowngrade?: boolean } = {}) => importPackage(pkg, { store, trust: [], ...o });

/** Import must refuse with exit 4 and `code`, leave everything but the audit log unchanged, and log the refusal. */
async function refused(pkg: string, store: string, code: string): Promise<void> {
  const before = await storeDigest(store);
  const lines = await auditCount(store);
  await expect(imp(pkg, store)).rejects.toMatchObject({ code, exitCode: 4 });
  expect(await storeDigest(store)).toBe(before);
  await expectRefusalLogged(store, lines, code);
}

describe('trust policy: thresholds', () => {
  it('two-person rule: a 2-of-3 policy needs two distinct signers', async () => {
    const store = freshStore();
    await installPolicy(store, [alice, bob, carol], 2);
    await refused(await signedPackage(dir, 'v1', [alice]), store, 'AIRLOCK_THRESHOLD');
    const r = await imp(await signedPackage(dir, 'v1', [alice, carol]), store);
    expect(r.status).toBe('imported');
    expect(r.signers).toEqual([fingerprint(alice.pub), fingerprint(carol.pub)].sort());
    expect(await lastAudit(store)).toMatchObject({ outcome: 'imported', version: 'v1', signers: r.signers, domain: 'docs.example.com' });
    await activate(store, 'v1');
    expect(await lastAudit(store)).toMatchObject({ command: 'activate', outcome: 'activated', version: 'v1', signers: r.signers });
  });

  it('duplicate signatures by one key counted twice: refused (they count once)', async () => {
    const store = freshStore();
    await installPolicy(store, [alice, bob, carol], 2);
    const one = await signedPackage(dir, 'v1', []);
    const [sa] = await signaturesBy(one, [alice.priv]);
    const dup = join(dir, 'dup-policy.airlock');
    await withSignatures(one, dup, [sa!, sa!, sa!]);
    await refused(dup, store, 'AIRLOCK_THRESHOLD');
  });

  it('signature by an expired key does not count', async () => {
    const store = freshStore();
    await installPolicy(store, [alice, bob, carol], 2, { expired: ['bob'] });
    const pkg = await signedPackage(dir, 'v1', [alice, bob]);
    await refused(pkg, store, 'AIRLOCK_THRESHOLD');
    expect((await lastAudit(store)).detail).toContain('expired keys do not count (bob)');
    expect((await lastAudit(store)).detail).not.toContain('not in policy'); // bob is in the policy, expired
  });

  it('a signature by a key outside the policy counts for nothing, and --trust does not widen a policy', async () => {
    const store = freshStore();
    await installPolicy(store, [alice, bob], 1);
    await refused(await signedPackage(dir, 'v1', [dave]), store, 'AIRLOCK_THRESHOLD');
    expect((await lastAudit(store)).detail).toContain('1 of its 1 signature member(s) are by keys not in policy 1 and count for nothing');
    const pkg = await signedPackage(dir, 'v1', [dave]);
    await expect(importPackage(pkg, { store, trust: [dave.pub] })).rejects.toMatchObject({ exitCode: 2, details: { subject: '--trust' } });
  });

  it('per-domain threshold overrides the default', async () => {
    const store = freshStore();
    await installPolicy(store, [alice, bob, carol], 1, { domains: { 'docs.example.com': 3 } });
    await refused(await signedPackage(dir, 'v1', [alice, bob]), store, 'AIRLOCK_THRESHOLD');
    expect((await imp(await signedPackage(dir, 'v1', [alice], { domain: 'other.example.com' }), store)).status).toBe('imported');
  });
});

describe('trust policy: the audit log remembers it', () => {
  it('a policy store without versions whose log and head are deleted: broken, and a refusal starts no new log over it', async () => {
    const store = freshStore();
    await installPolicy(store, [alice], 1);
    await rm(join(store, 'audit.log'));
    await rm(join(store, 'audit.head'));
    expect(await verifyAudit(store)).toMatchObject({ ok: false, problem: expect.stringMatching(/holds trust records \(the log was removed\)/) });
    await expect(imp(await signedPackage(dir, 'v1', [alice]), store)).rejects.toMatchObject({ code: 'AIRLOCK_AUDIT_BROKEN', exitCode: 4 });
    expect(await readdir(store)).not.toContain('audit.log');
  });
});

describe('trust policy: rotation', () => {
  it("rotation signed by threshold keys replaces the policy; a retired key's package is refused", async () => {
    const store = freshStore();
    await installPolicy(store, [alice, bob, carol], 2);
    const next = newPolicy({ keys: [bob, carol, dave].map((k) => ({ name: k.name, pem: k.pem })), threshold: 2, serial: 2 });
    const r = await rotatePolicy(store, readNewPolicy(next, signBytes(next, [alice.priv, bob.priv]), 'next'));
    expect(r).toMatchObject({ previous: 1, serial: 2, signers: ['alice', 'bob'] });
    expect((await loadPolicy(store))!.policy.serial).toBe(2);
    expect(await readdir(trustPaths(store).chain)).toEqual(['00000001.json', '00000002.json']);
    expect(await verifyChain(store)).toMatchObject({ ok: true, serials: [1, 2] });
    expect(await lastAudit(store)).toMatchObject({ command: 'trust rotate', outcome: 'policy-rotated' });
    await refused(await signedPackage(dir, 'v1', [alice, bob]), store, 'AIRLOCK_THRESHOLD'); // alice is retired
    expect((await imp(await signedPackage(dir, 'v1', [bob, dave]), store)).status).toBe('imported');
  });

  it('policy rotation signed by too few keys is refused, the policy unchanged', async () => {
    const store = freshStore();
    await installPolicy(store, [alice, bob, carol], 2);
    const next = newPolicy({ keys: [dave].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 2 });
    const before = await storeDigest(store);
    // One real signer, plus the same signature twice and a newcomer's own signature: still one.
    const sigs = [...signBytes(next, [alice.priv, alice.priv]), ...signBytes(next, [dave.priv])];
    await expect(rotatePolicy(store, readNewPolicy(next, sigs, 'next'))).rejects.toMatchObject({ code: 'AIRLOCK_POLICY_THRESHOLD', exitCode: 4 });
    expect(await storeDigest(store)).toBe(before);
    expect(await lastAudit(store)).toMatchObject({ command: 'trust rotate', outcome: 'refused', reason: 'AIRLOCK_POLICY_THRESHOLD' });
  });

  it('replaying an old policy (serial not above the current) is refused', async () => {
    const store = freshStore();
    const first = await installPolicy(store, [alice, bob], 1);
    await expect(rotatePolicy(store, readNewPolicy(first, signBytes(first, [alice.priv, bob.priv]), 'old'))).rejects.toMatchObject({
      code: 'AIRLOCK_POLICY_REPLAY',
      exitCode: 4,
    });
  });

  it('a rotation signed by an expired key of the current policy is refused', async () => {
    const store = freshStore();
    await installPolicy(store, [alice, bob, carol], 2, { expired: ['bob'] });
    const next = newPolicy({ keys: [alice, dave].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 2 });
    await expect(rotatePolicy(store, readNewPolicy(next, signBytes(next, [alice.priv, bob.priv]), 'next'))).rejects.toMatchObject({
      code: 'AIRLOCK_POLICY_THRESHOLD',
    });
  });
});

describe('no downgrade, no replay, no freeze (trust policy, several signers)', () => {
  it('a package with a sequence lower than one seen before is refused, also after that version was pruned', async () => {
    const store = freshStore();
    await installPolicy(store, [alice], 1);
    await imp(await signedPackage(dir, 'new', [alice], { sequence: 2000 }), store);
    await activate(store, 'new');
    const old = await signedPackage(dir, 'old', [alice], { sequence: 1000 });
    await refused(old, store, 'AIRLOCK_DOWNGRADE');
    await imp(await signedPackage(dir, 'newer', [alice], { sequence: 3000 }), store);
    await activate(store, 'newer');
    await imp(await signedPackage(dir, 'newest', [alice], { sequence: 4000 }), store);
    await activate(store, 'newest');
    expect(await prune(store, 1)).toEqual(['new']);
    expect(await lastAudit(store)).toMatchObject({ command: 'prune', outcome: 'pruned' });
    // 'new' (2000) is gone; a replay of a package at 2500 is still older than what was seen.
    await refused(await signedPackage(dir, 'replay', [alice], { sequence: 2500 }), store, 'AIRLOCK_DOWNGRADE');
    // The operator may override; that is recorded.
    const r = await imp(old, store, { allowDowngrade: true });
    expect(r.overridden).toEqual(['AIRLOCK_DOWNGRADE']);
    expect(await lastAudit(store)).toMatchObject({ outcome: 'imported', reason: 'AIRLOCK_ALLOW_DOWNGRADE', version: 'old' });
  });

  it('rollback and activate of versions already in the store stay allowed', async () => {
    const store = freshStore();
    await installPolicy(store, [alice], 1);
    await imp(await signedPackage(dir, 'a1', [alice], { sequence: 1 }), store);
    await imp(await signedPackage(dir, 'a2', [alice], { sequence: 2 }), store);
    await activate(store, 'a2');
    await activate(store, 'a1');
    expect(await rollback(store)).toBe('a2');
    const outcomes = (await import('../../src/store/audit.js')).readAudit(store);
    expect((await outcomes).map((l) => l.outcome).slice(-3)).toEqual(['activated', 'activated', 'rolled-back']);
  });

  it('an expired package is refused (freeze attack)', async () => {
    const store = freshStore();
    await installPolicy(store, [alice], 1);
    await refused(await signedPackage(dir, 'e1', [alice], { sequence: 1, expiresAt: '2021-01-01T00:00:00Z' }), store, 'AIRLOCK_EXPIRED');
    const future = new Date(Date.now() + 86_400_000).toISOString();
    expect((await imp(await signedPackage(dir, 'e2', [alice], { sequence: 2, expiresAt: future }), store)).status).toBe('imported');
  });

  it('a package addressed to another store is refused (mix-up)', async () => {
    const store = freshStore();
    await installPolicy(store, [alice], 1, { identity: 'plant-a' });
    await refused(await signedPackage(dir, 'm1', [alice], { sequence: 1, audience: 'plant-b' }), store, 'AIRLOCK_AUDIENCE');
    expect((await imp(await signedPackage(dir, 'm2', [alice], { sequence: 2, audience: 'plant-a' }), store)).status).toBe('imported');
  });

  it('a package without a sequence (older airlock) is ordered by its createdAt: an older one is refused as a downgrade', async () => {
    const store = freshStore();
    await installPolicy(store, [alice], 1);
    const at = (iso: string) => ({ createdAt: iso });
    expect((await imp(await signedPackage(dir, 'legacy1', [alice], at('2025-01-01T00:00:00.000Z')), store)).status).toBe('imported');
    await imp(await signedPackage(dir, 'seq1', [alice], { sequence: Date.parse('2025-06-01T00:00:00.000Z') }), store);
    await refused(await signedPackage(dir, 'legacy2', [alice], at('2025-03-01T00:00:00.000Z')), store, 'AIRLOCK_DOWNGRADE');
    expect((await lastAudit(store)).detail).toMatch(/no sequence, and its createdAt 2025-03-01T00:00:00.000Z/);
    expect((await imp(await signedPackage(dir, 'legacy3', [alice], at('2026-01-01T00:00:00.000Z')), store)).status).toBe('imported');
    await refused(await signedPackage(dir, 'seq2', [alice], { sequence: Date.parse('2025-12-31T00:00:00.000Z') }), store, 'AIRLOCK_DOWNGRADE');
  });

  it('verify --store answers exactly as import would, and writes nothing', async () => {
    const store = freshStore();
    await installPolicy(store, [alice, bob, carol], 2);
    const one = await signedPackage(dir, 'q1', [alice], { sequence: 5 });
    const before = await readFile(join(store, 'audit.log'));
    const digest = await storeDigest(store);
    await expect(admitPackage(store, await readPackage(one), { trust: [] })).rejects.toMatchObject({ code: 'AIRLOCK_THRESHOLD', exitCode: 4 });
    const two = await signedPackage(dir, 'q2', [alice, bob], { sequence: 5 });
    const a = await admitPackage(store, await readPackage(two), { trust: [] });
    expect(a).toMatchObject({ rule: 'policy', need: 2, signerNames: ['alice', 'bob'], policySerial: 1 });
    expect(await storeDigest(store)).toBe(digest);
    expect((await readFile(join(store, 'audit.log'))).equals(before)).toBe(true);
    expect((await imp(two, store)).signers).toEqual(a.signers);
  });
});

describe('audit log and import (trust policy, several signers)', () => {
  it('concurrent imports appending to the log keep one unbroken chain', async () => {
    const store = freshStore();
    await installPolicy(store, [alice], 1);
    const pkgs = await Promise.all([1, 2, 3, 4].map((i) => signedPackage(dir, `c${i}`, [alice], { sequence: i })));
    const results = await Promise.allSettled(pkgs.map((p) => imp(p, store)));
    // Lower sequences that lose the race are refused as downgrades; every outcome is one line.
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    expect(ok).toBeGreaterThanOrEqual(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'AIRLOCK_DOWNGRADE', exitCode: 4 });
    const audit = await verifyAudit(store);
    expect(audit).toMatchObject({ ok: true, lines: 1 + 4 });
  });

  it('thousands of signature members: refused at import (exit 4), store unchanged, refusal logged', async () => {
    const store = freshStore();
    await installPolicy(store, [alice], 1);
    const base = await signedPackage(dir, 'many', [], { sequence: 1 });
    const [sa] = await signaturesBy(base, [alice.priv]);
    const many = join(dir, 'many-sigs.airlock');
    await withSignatures(
      base,
      many,
      Array.from({ length: 3000 }, () => sa!),
    );
    await refused(many, store, 'AIRLOCK_TOO_MANY_SIGNATURES');
  });

  it('a truncated audit log stops imports before anything is committed', async () => {
    const store = freshStore();
    await installPolicy(store, [alice], 1);
    await imp(await signedPackage(dir, 't1', [alice], { sequence: 1 }), store);
    const log = join(store, 'audit.log');
    const text = await readFile(log, 'utf8');
    await writeFile(log, text.split('\n').slice(0, 1).join('\n') + '\n');
    const before = await storeDigest(store);
    await expect(imp(await signedPackage(dir, 't2', [alice], { sequence: 2 }), store)).rejects.toMatchObject({ code: 'AIRLOCK_AUDIT_BROKEN', exitCode: 4 });
    expect(await storeDigest(store)).toBe(before);
    expect(await readdir(join(store, 'versions'))).toEqual(['t1']);
  });
});

describe('stores without a policy', () => {
  it('trusted-keys/ still means any one key; the audit log and seen sequences are kept, no policy appears', async () => {
    const store = freshStore();
    const pkg = await buildPackage(dir, { version: 'flat1', files: sampleSite('flat1'), name: 'flat1.airlock' });
    const withSig = join(dir, 'flat1-signed.airlock');
    await withSignatures(pkg, withSig, await signaturesBy(pkg, [dave.priv, alice.priv]));
    await mkdir(join(store, 'trusted-keys'), { recursive: true });
    await writeFile(join(store, 'trusted-keys', 'alice.pub'), alice.pem);
    // A stranger's extra signature is ignored; alice's (from trusted-keys/) is enough.
    expect(await admitPackage(store, await readPackage(withSig), { trust: [] })).toMatchObject({ rule: 'flat', signers: [fingerprint(alice.pub)], need: 1 });
    expect((await importPackage(withSig, { store, trust: [] })).status).toBe('imported');
    // Since the trust policy: every store keeps the audit log and the highest sequence seen; no policy appears.
    expect((await readdir(store)).sort()).toEqual(['audit.head', 'audit.log', 'trust', 'trusted-keys', 'versions']);
    expect(await readdir(join(store, 'trust'))).toEqual(['seen.json']);
    expect(await lastAudit(store)).toMatchObject({
      outcome: 'imported',
      signers: [fingerprint(alice.pub)],
      detail: expect.stringMatching(/^sequence \d+; no trust policy: signed by a trusted key$/),
    });
  });
});
