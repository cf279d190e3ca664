/**
 * What the trust policy machinery costs an import (policy store: 2-of-3 threshold, freshness
 * check, seen.json, two fsynced audit appends) against the same import into a store without a
 * policy (one --trust key), same package, same disk, same run; plus the signature count alone
 * for 32 signatures against 1. Medians of --runs; ratios printed.
 *   node --import tsx bench/trust.ts [--files 300] [--runs 7]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importPackage } from '../src/store/import.js';
import { newPolicy } from '../src/store/policy.js';
import { initPolicy } from '../src/store/trust-ops.js';
import { appendAudit } from '../src/store/audit.js';
import { admitPackage } from '../src/store/admit.js';
import { addSignature, readPackage } from '../src/package/index.js';
import { signersOf } from '../src/package/signature.js';
import { buildPackage, sampleSite } from '../test/store/helpers.js';
import { pair, withSignatures, signaturesBy } from '../test/helpers/multisig.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const files = arg('files', 300);
const runs = arg('runs', 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const dir = mkdtempSync(join(tmpdir(), 'airlock-bench-trust-'));
try {
  const [a, b, c] = [pair(), pair(), pair()];
  const pkg = await buildPackage(dir, { version: 'b1', files: sampleSite('b1', files), tamper: (m) => Object.assign(m, { sequence: 1 }) });
  await addSignature(pkg, a.priv);
  await addSignature(pkg, b.priv);
  const flat: number[] = [];
  const policy: number[] = [];
  for (let i = 0; i < runs; i++) {
    // Alternate which goes first, so neither always meets a cold or a warm cache.
    const s2 = join(dir, `policy${i}`);
    await initPolicy(s2, newPolicy({ keys: [a, b, c].map((k, j) => ({ name: `k${j}`, pem: k.pem })), threshold: 2 }), []);
    const order = i % 2 === 0 ? ['flat', 'policy'] : ['policy', 'flat'];
    for (const kind of order) {
      const t = performance.now();
      if (kind === 'flat') await importPackage(pkg, { store: join(dir, `flat${i}`), trust: [a.pub] });
      else await importPackage(pkg, { store: s2, trust: [] });
      (kind === 'flat' ? flat : policy).push(performance.now() - t);
    }
  }
  console.log(
    `import of ${files + 4} files: flat store (any one key) median ${median(flat).toFixed(1)} ms; policy store (2-of-3, audited) median ${median(policy).toFixed(1)} ms; ratio ${(median(policy) / median(flat)).toFixed(2)}`,
  );

  const s3 = join(dir, 'audit');
  await initPolicy(s3, newPolicy({ keys: [{ name: 'a', pem: a.pem }], threshold: 1 }), []);
  const appends: number[] = [];
  for (let i = 0; i < runs * 5; i++) {
    const t = performance.now();
    await appendAudit(s3, { command: 'bench', outcome: 'ok', detail: `line ${i}` });
    appends.push(performance.now() - t);
  }
  const admits: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await admitPackage(join(dir, 'policy0'), await readPackage(pkg), { trust: [], allowDowngrade: true });
    admits.push(performance.now() - t);
  }
  console.log(
    `audit append (lock, fsync line, atomic head) median ${median(appends).toFixed(2)} ms; policy decision alone (verify --store's first step) median ${median(admits).toFixed(2)} ms`,
  );

  const one = join(dir, 'one.airlock');
  const many = join(dir, 'many.airlock');
  const keys = Array.from({ length: 32 }, () => pair());
  await withSignatures(pkg, one, await signaturesBy(pkg, [keys[0]!.priv]));
  await withSignatures(
    pkg,
    many,
    await signaturesBy(
      pkg,
      keys.map((k) => k.priv),
    ),
  );
  const lOne = await readPackage(one);
  const lMany = await readPackage(many);
  const pubs = keys.map((k) => k.pub);
  const time = (f: () => void) => {
    const t = performance.now();
    for (let i = 0; i < 10; i++) f();
    return (performance.now() - t) / 10;
  };
  const t1: number[] = [];
  const t32: number[] = [];
  for (let i = 0; i < runs; i++) {
    t1.push(time(() => signersOf(lOne, pubs)));
    t32.push(time(() => signersOf(lMany, pubs)));
  }
  console.log(
    `counting signers against 32 keys: 1 signature median ${median(t1).toFixed(2)} ms; 32 signatures median ${median(t32).toFixed(2)} ms; ratio ${(median(t32) / median(t1)).toFixed(1)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
