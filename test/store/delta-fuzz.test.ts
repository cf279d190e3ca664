import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toAirlockError } from '../../src/errors.js';
import { makeDelta, readDelta } from '../../src/delta/index.js';
import { writeMembers } from '../../src/delta/write.js';
import { importPackage, storedPackage } from '../../src/store/index.js';
import { jsonMutants, mutants } from '../helpers/mutate.js';
import { buildPackage, makeTempDir, treeDigest } from './helpers.js';
import { auditCount } from './audit-expect.js';
import { verifyAudit } from '../../src/store/audit.js';
let pristineLines = 0;

/**
 * Bounded mutation fuzz of the delta format: byte mutants of a real signed delta, and
 * structure-aware mutants of its manifest and of its ops list (ops.json.gz), RE-SIGNED with the trusted key (so the delta's own rules
 * run, not only the signature). Each import either yields exactly the target version or is refused
 * with exit 4 and the store byte-identical; never exit 1 / AIRLOCK_INTERNAL.
 */
const BYTE_MUTANTS = 80;
const JSON_MUTANTS = 80;
const signer = generateKeyPairSync('ed25519');
const trust = [signer.publicKey];
let dir: string;
let delta: string;
let fullBytes: Buffer;
let pristine: string;
let before: string;

function site(tag: string, pages = 12): Record<string, string> {
  const nav = Array.from({ length: pages }, (_, i) => `<a href="/p${i}">P${i}</a>`).join('');
  const files: Record<string, string> = { 'index.html': `<nav>${nav}</nav><h1>${tag}</h1>` };
  for (let i = 0; i < pages; i++) files[`docs/p${i}.html`] = `<nav>${nav}</nav><main>${'text '.repeat(60)} ${i} ${tag}</main>`;
  return files;
}

beforeAll(async () => {
  dir = await makeTempDir('airlock-delta-fuzz-');
  const key = { priv: signer.privateKey, pub: signer.publicKey, pubPath: '' };
  const v1 = await buildPackage(dir, { version: 'v1', files: site('a'), key });
  const f2 = site('a', 13);
  f2['docs/p2.html'] += ' edited';
  f2['extra.html'] = '<p>new</p>';
  const v2 = await buildPackage(dir, { version: 'v2', files: f2, key });
  const r = await makeDelta({ oldPkg: v1, newPkg: v2, outDir: join(dir, 'out'), signKey: signer.privateKey });
  delta = r.delta;
  fullBytes = await readFile(r.full);
  pristine = join(dir, 'pristine');
  await importPackage(v1, { store: pristine, trust });
  before = await treeDigest(pristine);
  pristineLines = await auditCount(pristine);
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function tryImport(bytes: Buffer, what: string): Promise<'ok' | 4> {
  const pkg = join(dir, `m-${++n}.airlock`);
  const store = join(dir, `s-${n}`);
  await writeFile(pkg, bytes);
  await cp(pristine, store, { recursive: true });
  try {
    await importPackage(pkg, { store, trust });
    expect((await readFile((await storedPackage(store, 'v2')).path)).equals(fullBytes), `${what}: imported but not the target`).toBe(true);
    return 'ok';
  } catch (err) {
    const e = toAirlockError(err);
    if (e.exitCode !== 4 || e.code === 'AIRLOCK_INTERNAL') throw new Error(`${what}: import exited ${e.exitCode} ${e.code}: ${e.message}`, { cause: err });
    expect(await treeDigest(store), `${what}: store changed`).toBe(before);
    expect(await auditCount(store), `${what}: one refusal line`).toBe(pristineLines + 1); // the audit log
    expect((await verifyAudit(store)).ok, `${what}: audit chain`).toBe(true);
    return 4;
  } finally {
    await rm(store, { recursive: true, force: true });
    await rm(pkg, { force: true });
  }
}

describe('delta package fuzz (bounded)', () => {
  it(`${BYTE_MUTANTS} byte mutants: the target exactly, or exit 4 with the store unchanged`, async () => {
    const good = await readFile(delta);
    const seen = { ok: 0, refused: 0 };
    for (const m of mutants(good, BYTE_MUTANTS)) {
      const r = await tryImport(m.bytes, `byte mutant #${m.index} (${m.mutation} at ${m.at})`);
      seen[r === 'ok' ? 'ok' : 'refused']++;
    }
    expect(seen.refused).toBeGreaterThan(BYTE_MUTANTS / 2);
  }, 120_000);

  it(`${JSON_MUTANTS} re-signed manifest mutants and ${JSON_MUTANTS} ops-list mutants: the target exactly, or exit 4 with the store unchanged`, async () => {
    const l = await readDelta(delta);
    const raw = await readFile(delta);
    const payload = Buffer.from(raw.subarray(l.payload.offset, l.payload.offset + l.payload.size));
    const { opsFile, ops, removed, ...rest } = l.manifest;
    const realOps = gzipSync(JSON.stringify({ ops, removed }));
    const write = async (name: string, envelope: unknown, opsGz: Buffer): Promise<Buffer | null> => {
      let bytes: Buffer;
      try {
        bytes = Buffer.from(JSON.stringify(envelope) ?? 'null');
      } catch {
        return null; // too deep for JSON.stringify here; the byte bound is covered by the reader tests
      }
      const out = join(dir, name);
      const members = [
        { name: 'airlock.json', body: { bytes } },
        { name: 'airlock.json.sig', body: { bytes: sign(null, bytes, signer.privateKey) } },
        { name: 'ops.json.gz', body: { bytes: opsGz } },
        { name: 'target.json.gz', body: { bytes: l.target.patch } },
        { name: 'target.json.sig', body: { bytes: l.target.signature! } },
        { name: 'payload.gz', body: { bytes: payload } },
      ];
      await writeMembers(out, members, new Date(0));
      const b = await readFile(out);
      await rm(out);
      return b;
    };
    let refused = 0;
    // 1. the envelope (ops.json.gz kept as it is)
    for (const m of jsonMutants({ ...rest, opsFile }, JSON_MUTANTS)) {
      const b = await write(`j-${m.index}.airlock`, m.value, realOps);
      if (b && (await tryImport(b, `manifest mutant #${m.index} (${m.what})`)) === 4) refused++;
    }
    // 2. the ops list, re-gzipped and named correctly by a re-signed envelope (so the delta's own rules run)
    let opsRefused = 0;
    for (const m of jsonMutants({ ops, removed }, JSON_MUTANTS)) {
      let json: Buffer;
      try {
        json = Buffer.from(JSON.stringify(m.value) ?? 'null');
      } catch {
        continue;
      }
      const gz = gzipSync(json);
      const envelope = { ...rest, opsFile: { size: gz.length, sha256: createHash('sha256').update(gz).digest('hex'), expandedSize: json.length } };
      const b = await write(`o-${m.index}.airlock`, envelope, gz);
      if (b && (await tryImport(b, `ops mutant #${m.index} (${m.what})`)) === 4) opsRefused++;
    }
    expect(refused).toBeGreaterThan(JSON_MUTANTS / 2);
    expect(opsRefused).toBeGreaterThan(JSON_MUTANTS / 4);
  }, 180_000);
});
