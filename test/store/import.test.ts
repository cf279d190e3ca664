import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdir, readFile, rm, mkdir, copyFile, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { importPackage, listVersions, readState, loadVersion } from '../../src/store/index.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, treeDigest, type TestKey } from './helpers.js';
import { auditCount, expectRefusalLogged } from './audit-expect.js';
import { readAudit, verifyAudit } from '../../src/store/audit.js';
import { admitPackage } from '../../src/store/admit.js';
import { readPackage } from '../../src/package/index.js';

let dir: string;
let key: TestKey;
let other: TestKey;
let v1: string;
let v2: string;
let v1Other: string;
let unsigned: string;
beforeAll(async () => {
  dir = await makeTempDir();
  key = await makeKey(dir, 'signer');
  other = await makeKey(dir, 'stranger');
  v1 = await buildPackage(dir, { version: 'v1', files: sampleSite('one'), key });
  v2 = await buildPackage(dir, { version: 'v2', files: sampleSite('two'), key });
  await mkdir(join(dir, 'conflict'));
  v1Other = await buildPackage(join(dir, 'conflict'), { version: 'v1', files: sampleSite('different'), key });
  await mkdir(join(dir, 'unsigned'));
  unsigned = await buildPackage(join(dir, 'unsigned'), { version: 'v3', files: sampleSite('three') });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const newStore = async (name: string) => join(dir, `store-${name}`);
const sha = async (p: string) =>
  createHash('sha256')
    .update(await readFile(p))
    .digest('hex');

describe('importPackage', () => {
  it('imports a signed package: complete version, exact package and manifest kept, staging gone', async () => {
    const store = await newStore('basic');
    const r = await importPackage(v1, { store, trust: [key.pub] });
    expect(r).toEqual({ version: 'v1', status: 'imported', activated: false });
    const vdir = join(store, 'versions', 'v1');
    expect(await sha(join(vdir, 'package.airlock'))).toBe(await sha(v1));
    const manifest = JSON.parse(await readFile(join(vdir, 'airlock.json'), 'utf8'));
    for (const f of manifest.files) expect(await sha(join(vdir, 'site', f.path))).toBe(f.sha256);
    const meta = JSON.parse(await readFile(join(vdir, 'version.json'), 'utf8'));
    expect(meta).toMatchObject({ label: 'v1', packageSha256: await sha(v1), signer: expect.stringMatching(/^sha256:/), fileCount: manifest.files.length });
    // Trust policy: every store keeps an audit log and the highest sequence seen (trust/seen.json).
    expect((await readdir(store)).sort()).toEqual(['audit.head', 'audit.log', 'trust', 'versions']);
    expect(await readAudit(store)).toMatchObject([
      { n: 1, command: 'import', outcome: 'imported', version: 'v1', packageSha256: await sha(v1), signers: [meta.signer] },
    ]);
    expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 1 });
    expect((await readState(store)).active).toBeNull();
    const loaded = await loadVersion(store, 'v1');
    expect(loaded.manifest.version).toBe('v1');
    expect(loaded.variants.size).toBe(0);
  });

  it('--activate makes it active; importing the same package twice is a no-op', async () => {
    const store = await newStore('idem');
    await importPackage(v1, { store, trust: [key.pub], activate: true });
    expect((await readState(store)).active).toBe('v1');
    const before = await treeDigest(store);
    await expect(importPackage(v1, { store, trust: [key.pub] })).resolves.toMatchObject({ status: 'unchanged' });
    expect(await treeDigest(store)).toBe(before);
    expect((await readAudit(store)).map((l) => l.outcome)).toEqual(['imported', 'activated', 'unchanged']);
  });

  it('different content under an existing label is refused and the store is byte-for-byte unchanged', async () => {
    const store = await newStore('conflict');
    await importPackage(v1, { store, trust: [key.pub] });
    const before = await treeDigest(store);
    const lines = await auditCount(store);
    await expect(importPackage(v1Other, { store, trust: [key.pub] })).rejects.toMatchObject({ code: 'AIRLOCK_VERSION_CONFLICT', exitCode: 1 });
    expect(await treeDigest(store)).toBe(before);
    await expectRefusalLogged(store, lines, 'AIRLOCK_VERSION_CONFLICT');
  });

  it('an unsigned package is refused (exit 4) without allowUnsigned, accepted with it', async () => {
    const store = await newStore('unsigned');
    await importPackage(v1, { store, trust: [key.pub] });
    const before = await treeDigest(store);
    const lines = await auditCount(store);
    await expect(importPackage(unsigned, { store, trust: [key.pub] })).rejects.toMatchObject({ exitCode: 4 });
    expect(await treeDigest(store)).toBe(before);
    await expectRefusalLogged(store, lines, 'AIRLOCK_UNSIGNED');
    await expect(importPackage(unsigned, { store, trust: [], allowUnsigned: true })).resolves.toMatchObject({ status: 'imported' });
  });

  it('a package signed by an untrusted key is refused (exit 4) and the store is unchanged', async () => {
    const store = await newStore('untrusted');
    await importPackage(v1, { store, trust: [key.pub] });
    const before = await treeDigest(store);
    const lines = await auditCount(store);
    await expect(importPackage(v2, { store, trust: [other.pub] })).rejects.toMatchObject({ exitCode: 4 });
    expect(await treeDigest(store)).toBe(before);
    await expectRefusalLogged(store, lines, 'AIRLOCK_UNTRUSTED_SIGNATURE');
  });

  it('keys in STORE/trusted-keys/*.pub are trusted', async () => {
    const store = await newStore('trusted-dir');
    await mkdir(join(store, 'trusted-keys'), { recursive: true });
    await copyFile(key.pubPath, join(store, 'trusted-keys', 'ops.pub'));
    await expect(importPackage(v2, { store, trust: [] })).resolves.toMatchObject({ status: 'imported' });
  });

  it('a file digest that does not match the manifest is refused (exit 4), no version, no staging left', async () => {
    const store = await newStore('lie');
    await importPackage(v1, { store, trust: [key.pub] });
    const before = await treeDigest(store);
    const lines = await auditCount(store);
    const lie = await buildPackage(dir, { version: 'v9', files: sampleSite('nine'), key, lie: true });
    await expect(importPackage(lie, { store, trust: [key.pub] })).rejects.toMatchObject({ exitCode: 4 });
    expect(await treeDigest(store)).toBe(before);
    const line = await expectRefusalLogged(store, lines, /^AIRLOCK_/);
    expect(line).toMatchObject({ domain: 'docs.example.com', version: 'v9', packageSha256: await sha(lie) });
  });

  it('staging garbage from a crash is removed by the next import', async () => {
    const store = await newStore('garbage');
    await mkdir(join(store, 'staging', 'deadbeef', 'site'), { recursive: true });
    await writeFile(join(store, 'staging', 'deadbeef', 'site', 'half.html'), 'half');
    await importPackage(v1, { store, trust: [key.pub] });
    expect((await readdir(store)).sort()).toEqual(['audit.head', 'audit.log', 'trust', 'versions']);
    expect((await listVersions(store)).map((v) => v.version)).toEqual(['v1']);
  });

  it('replay of an older package into a store without a policy: refused as a downgrade (no sequence: ordered by createdAt), logged, store unchanged', async () => {
    const store = await newStore('replay');
    await importPackage(v2, { store, trust: [key.pub] }); // v1 was built (createdAt) before v2; neither has a sequence
    const before = await treeDigest(store);
    const lines = await auditCount(store);
    // verify --store takes the same decision and writes nothing, not even a log line.
    const all = await treeDigest(store, { all: true });
    await expect(admitPackage(store, await readPackage(v1), { trust: [key.pub] })).rejects.toMatchObject({ code: 'AIRLOCK_DOWNGRADE', exitCode: 4 });
    expect(await treeDigest(store, { all: true })).toBe(all);
    await expect(importPackage(v1, { store, trust: [key.pub] })).rejects.toMatchObject({ code: 'AIRLOCK_DOWNGRADE', exitCode: 4 });
    expect(await treeDigest(store)).toBe(before);
    const line = await expectRefusalLogged(store, lines, 'AIRLOCK_DOWNGRADE');
    expect(line.detail).toMatch(/it has no sequence, and its createdAt .* is below \d+, the highest this store has imported for docs.example.com \(v2\)/);
    expect(JSON.parse(await readFile(join(store, 'trust', 'seen.json'), 'utf8')).domains['docs.example.com']).toMatchObject({ version: 'v2' });
    // --allow-downgrade imports it, and the line says so.
    await expect(importPackage(v1, { store, trust: [key.pub], allowDowngrade: true })).resolves.toMatchObject({
      status: 'imported',
      overridden: ['AIRLOCK_DOWNGRADE'],
    });
    expect((await readAudit(store)).at(-1)).toMatchObject({ outcome: 'imported', reason: 'AIRLOCK_ALLOW_DOWNGRADE', version: 'v1' });
  });

  it('a fleet follower waives only the order rule (allowDowngrade: [AIRLOCK_DOWNGRADE]): an older package imports, an expired one is still refused', async () => {
    const store = await newStore('follower');
    await importPackage(v2, { store, trust: [key.pub] });
    await expect(importPackage(v1, { store, trust: [key.pub], allowDowngrade: ['AIRLOCK_DOWNGRADE'] })).resolves.toMatchObject({
      status: 'imported',
      overridden: ['AIRLOCK_DOWNGRADE'],
    });
    const stale = await buildPackage(dir, {
      version: 'v8',
      files: sampleSite('eight'),
      key,
      tamper: (m) => Object.assign(m, { expiresAt: '2020-01-01T00:00:00Z' }),
    });
    const lines = await auditCount(store);
    await expect(importPackage(stale, { store, trust: [key.pub], allowDowngrade: ['AIRLOCK_DOWNGRADE'] })).rejects.toMatchObject({
      code: 'AIRLOCK_EXPIRED',
      exitCode: 4,
    });
    await expectRefusalLogged(store, lines, 'AIRLOCK_EXPIRED');
  });

  it('importing again an older version that is still in the store (same manifest) is "unchanged", not a downgrade; once pruned it is refused', async () => {
    const store = await newStore('again');
    await importPackage(v1, { store, trust: [key.pub] });
    await importPackage(v2, { store, trust: [key.pub], activate: true });
    await expect(importPackage(v1, { store, trust: [key.pub], activate: true })).resolves.toMatchObject({ status: 'unchanged', activated: true });
    expect((await readAudit(store)).slice(-2).map((l) => `${l.outcome} ${l.version}`)).toEqual(['unchanged v1', 'activated v1']);
    await importPackage(v2, { store, trust: [key.pub], activate: true });
    const { prune } = await import('../../src/store/prune.js');
    const { writeState } = await import('../../src/store/state.js');
    await writeState(store, { active: 'v2', previous: null });
    expect(await prune(store, 1)).toEqual(['v1']);
    await expect(importPackage(v1, { store, trust: [key.pub] })).rejects.toMatchObject({ code: 'AIRLOCK_DOWNGRADE', exitCode: 4 });
  });

  it('concurrent imports into a store without a policy append to one unbroken chain, and each domain is recorded in seen.json', async () => {
    const store = await newStore('concurrent');
    await mkdir(join(dir, 'conc'), { recursive: true });
    const pkgs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => buildPackage(join(dir, 'conc'), { version: `c${i}`, files: sampleSite(`c${i}`), key, domain: `d${i}.example.com` })),
    );
    const rs = await Promise.all(pkgs.map((p) => importPackage(p, { store, trust: [key.pub], lockTimeoutMs: 30_000 })));
    expect(rs.map((r) => r.status)).toEqual(Array(6).fill('imported'));
    expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 6, pending: false });
    expect(new Set((await readAudit(store)).map((l) => l.domain)).size).toBe(6);
    expect(Object.keys(JSON.parse(await readFile(join(store, 'trust', 'seen.json'), 'utf8')).domains).sort()).toEqual(
      Array.from({ length: 6 }, (_, i) => `d${i}.example.com`),
    );
  });

  it('a missing package file is a usage error naming it', async () => {
    const store = await newStore('missing');
    await expect(importPackage(join(dir, 'nope.airlock'), { store, trust: [] })).rejects.toMatchObject({
      exitCode: 2,
      details: { subject: expect.stringContaining('nope.airlock') },
    });
  });

  it('three imports at once into a new store, ten rounds: each ends imported or refused for a rule of its package (never as if the store were damaged), and each is in the audit log', async () => {
    await mkdir(join(dir, 'third'));
    const v3 = await buildPackage(join(dir, 'third'), { version: 'v3', files: sampleSite('three'), key });
    for (let round = 0; round < 10; round++) {
      const store = await newStore(`three-at-once-${round}`);
      const results = await Promise.allSettled([v1, v2, v3].map((p) => importPackage(p, { store, trust: [key.pub], activate: true })));
      const outcomes = results.map((r) => (r.status === 'fulfilled' ? r.value.status : (r.reason as { code?: string }).code));
      for (const o of outcomes) expect(['imported', 'AIRLOCK_DOWNGRADE'], `round ${round}: ${outcomes.join(', ')}`).toContain(o);
      expect(
        (await readAudit(store)).filter((l) => l.command === 'import' && l.outcome !== 'failed'),
        `round ${round}`,
      ).toHaveLength(3);
      expect((await verifyAudit(store)).ok).toBe(true);
    }
  });
});
