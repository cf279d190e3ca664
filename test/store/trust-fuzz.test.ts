import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AirlockError } from '../../src/errors.js';
import { importPackage } from '../../src/store/import.js';
import { checkRotation, envelope, loadPolicy, newPolicy, trustPaths } from '../../src/store/policy.js';
import { readNewPolicy, rotatePolicy } from '../../src/store/trust-ops.js';
import { appendAudit, auditPaths, verifyAudit } from '../../src/store/audit.js';
import { admitPackage } from '../../src/store/admit.js';
import { readPackage } from '../../src/package/reader.js';
import { padded } from '../../src/package/tar-header.js';
import { makeTempDir } from './helpers.js';
import { pair } from '../helpers/multisig.js';
import { installPolicy, lastAudit, signBytes, signedPackage, storeDigest, type Named } from './trust-helpers.js';

/** Bounded mutation fuzz (trust policy, several signers): the policy file and the signature members. Seeded, so a failure replays. */
let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('airlock-trust-fuzz-');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function rng(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s % n;
  };
}
function mutate(bytes: Buffer, r: (n: number) => number): Buffer {
  const b = Buffer.from(bytes);
  switch (r(6)) {
    case 0: {
      const i = r(b.length);
      b[i] = b[i]! ^ (1 << r(8));
      return b;
    }
    case 1:
      return b.subarray(0, r(b.length));
    case 2: {
      const i = r(b.length);
      return Buffer.concat([b.subarray(0, i), Buffer.from('"' + 'A'.repeat(300_000) + '"'), b.subarray(i)]);
    }
    case 3: {
      const i = r(b.length);
      return Buffer.concat([b.subarray(0, i), Buffer.from('['.repeat(5000) + ']'.repeat(5000)), b.subarray(i)]);
    }
    case 4: {
      const i = r(b.length);
      return Buffer.concat([b.subarray(0, i), Buffer.from(',"threshold":{"default":1,"domains":{}}'), b.subarray(i)]);
    }
    default: {
      const i = r(b.length);
      const j = r(b.length);
      b[i] = b[j]!;
      b[j] = 0x22;
      return b;
    }
  }
}

const named = (name: string): Named => ({ name, ...pair() });
const [alice, bob, carol, mallory] = [named('alice'), named('bob'), named('carol'), named('mallory')];

describe('trust fuzz (trust policy, several signers)', () => {
  it('mutated policy rotations are refused with exit 4 and the store unchanged', async () => {
    const store = join(dir, 'rot');
    await installPolicy(store, [alice, bob, carol], 2);
    const next = newPolicy({ keys: [mallory].map((k) => ({ name: k.name, pem: k.pem })), threshold: 1, serial: 2 });
    const sigs = signBytes(next, [alice.priv, bob.priv]);
    const signed = Buffer.from(envelope(next, sigs));
    const before = await storeDigest(store);
    const r = rng(14);
    for (let i = 0; i < 120; i++) {
      const plain = i % 2 === 0;
      const m = mutate(plain ? next : signed, r);
      let candidate = null;
      try {
        candidate = readNewPolicy(m, plain ? sigs : [], 'fuzz');
        checkRotation((await loadPolicy(store))!, candidate, new Date());
        // A mutation outside the signed text (envelope whitespace) may leave the same policy: only then may it pass.
        expect(candidate.bytes.equals(next)).toBe(true);
        continue;
      } catch (err) {
        expect(err, String(err)).toBeInstanceOf(AirlockError);
        expect((err as AirlockError).exitCode).toBe(4);
      }
      // Parsed but refused: the store path refuses it too (and logs the refusal).
      if (candidate) await expect(rotatePolicy(store, candidate)).rejects.toMatchObject({ exitCode: 4 });
    }
    expect(await storeDigest(store)).toBe(before);
    expect((await verifyAudit(store)).ok).toBe(true);
  }, 50_000);

  it('a mutated stored policy never lets an unsigned package in, and never crashes', async () => {
    const store = join(dir, 'stored');
    await installPolicy(store, [alice, bob], 1);
    const pkg = await signedPackage(dir, 'u1', [], { sequence: 1 });
    const good = await readFile(trustPaths(store).policy);
    const r = rng(41);
    for (let i = 0; i < 60; i++) {
      await writeFile(trustPaths(store).policy, mutate(good, r));
      const before = await storeDigest(store);
      await expect(importPackage(pkg, { store, trust: [] })).rejects.toMatchObject({ exitCode: 4 });
      expect(await storeDigest(store)).toBe(before);
    }
    expect((await verifyAudit(store)).ok).toBe(true);
  }, 50_000);

  it('mutated signature members of a 2-of-3 package are refused with exit 4 and the store unchanged', async () => {
    const store = join(dir, 'sigs');
    await installPolicy(store, [alice, bob, carol], 2);
    const pkg = await signedPackage(dir, 'g1', [alice, bob], { sequence: 1 });
    const l = await readPackage(pkg);
    const bytes = await readFile(pkg);
    const first = 512 + padded(l.manifestBytes.length); // the first signature member's header
    const r = rng(7);
    const bad = join(dir, 'bad.airlock');
    const before = await storeDigest(store);
    for (let i = 0; i < 80; i++) {
      const b = Buffer.from(bytes);
      const member = r(2);
      const header = first + member * 1024;
      let out: Buffer;
      if (i % 10 === 9)
        out = b.subarray(0, header + r(1024)); // truncated inside the signatures
      else if (r(3) === 0) {
        const at = header + r(512);
        b[at] = b[at]! ^ (1 << r(8));
        out = b;
      } // header
      else {
        const at = header + 512 + r(64);
        b[at] = b[at]! ^ (1 << r(8));
        out = b;
      } // signature bytes
      await writeFile(bad, out);
      await expect(importPackage(bad, { store, trust: [] })).rejects.toMatchObject({ exitCode: 4 });
      expect(await storeDigest(store)).toBe(before);
    }
    expect(await lastAudit(store)).toMatchObject({ outcome: 'refused' });
    expect((await importPackage(pkg, { store, trust: [] })).status).toBe('imported'); // the unmutated one still imports
  }, 50_000);

  it('a mutated audit log or head is always reported broken by audit verify, never a crash', async () => {
    const store = join(dir, 'audit');
    await installPolicy(store, [alice], 1);
    for (let i = 0; i < 6; i++) await appendAudit(store, { command: 'test', outcome: 'ok', detail: `event ${i}` });
    const { log, head } = auditPaths(store);
    const goodLog = await readFile(log);
    const goodHead = await readFile(head);
    const r = rng(99);
    for (let i = 0; i < 80; i++) {
      const target = i % 4 === 3 ? 'head' : 'log';
      const m = mutate(target === 'log' ? goodLog : goodHead, r);
      if (m.equals(target === 'log' ? goodLog : goodHead)) continue;
      await writeFile(target === 'log' ? log : head, m);
      const v = await verifyAudit(store).catch((err: unknown) => err);
      if (v instanceof AirlockError)
        expect(v.exitCode).toBe(4); // a damaged head: AIRLOCK_AUDIT_BROKEN
      else expect(v, JSON.stringify(v)).toMatchObject({ ok: false });
      await writeFile(log, goodLog);
      await writeFile(head, goodHead);
    }
    expect((await verifyAudit(store)).ok).toBe(true);
  }, 50_000);

  it('a mutated seen.json is refused (exit 4) or read as numbers, never a crash', async () => {
    const store = join(dir, 'seen');
    await installPolicy(store, [alice], 1);
    await importPackage(await signedPackage(dir, 'n1', [alice], { sequence: 5 }), { store, trust: [] });
    const good = await readFile(trustPaths(store).seen);
    const pkg = await signedPackage(dir, 'n2', [alice], { sequence: 6 });
    const r = rng(5);
    for (let i = 0; i < 40; i++) {
      await writeFile(trustPaths(store).seen, mutate(good, r));
      const before = await storeDigest(store);
      try {
        await admitPackage(store, await readPackage(pkg), { trust: [] });
      } catch (err) {
        expect(err).toBeInstanceOf(AirlockError);
        expect((err as AirlockError).exitCode).toBe(4);
      }
      expect(await storeDigest(store)).toBe(before);
    }
  }, 50_000);
});
