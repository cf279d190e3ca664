import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync, sign } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toAirlockError } from '../../src/errors.js';
import { readPackage } from '../../src/package/reader.js';
import { verifyPackage } from '../../src/package/verify.js';
import { importPackage } from '../../src/store/index.js';
import { makePackage } from '../helpers/make-package.js';
import { jsonMutants, mutants } from '../helpers/mutate.js';
import { siteFiles } from '../helpers/evil-archives.js';
import { treeDigest } from '../store/helpers.js';
import { assemble, membersOf, type Member } from './craft.js';

/**
 * Bounded mutation fuzz of the package format. Byte mutants of a real signed package
 * (flips, truncations, splices...) and structure-aware mutants of its manifest RE-SIGNED with the
 * trusted key (so the manifest checks run, not only the signature) go through inspect
 * (readPackage), verify and import. Each must pass (a harmless mutation) or be refused with exit 4;
 * never exit 1 / AIRLOCK_INTERNAL; a refused import leaves the store byte-identical.
 */
const BYTE_MUTANTS = 300;
const JSON_MUTANTS = 300;
const signer = generateKeyPairSync('ed25519');
const trust = [signer.publicKey];
let dir: string;
let good: string;
let store: string;
let pristine: string;
let members: Member[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-pkg-fuzz-'));
  const site = join(dir, 'site');
  for (const f of siteFiles()) {
    await mkdir(join(site, f.name, '..'), { recursive: true });
    await writeFile(join(site, f.name), f.data);
  }
  good = (await makePackage({ outDir: join(dir, 'good'), siteDir: site, signKey: signer.privateKey })).pkgPath;
  members = await membersOf(good);
  store = join(dir, 'store');
  pristine = join(dir, 'pristine-store');
  await importPackage(good, { store: pristine, trust });
  await cp(pristine, store, { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * JSON text of a mutant without recursion: jsonMutants nests values 5,000 deep, and JSON.stringify
 * itself overflows a worker thread's stack on that (which is why the reader bounds depth first).
 */
function stringifyFlat(root: unknown): string {
  const out: string[] = [];
  const todo: unknown[] = [root];
  while (todo.length) {
    const v = todo.pop();
    if (typeof v === 'symbol') {
      out.push(v.description!);
      continue;
    }
    if (Array.isArray(v)) {
      out.push('[');
      todo.push(Symbol(']'));
      for (let i = v.length - 1; i >= 0; i--) todo.push(v[i], ...(i > 0 ? [Symbol(',')] : []));
    } else if (v && typeof v === 'object') {
      const entries = Object.entries(v).filter(([, x]) => x !== undefined);
      out.push('{');
      todo.push(Symbol('}'));
      for (let i = entries.length - 1; i >= 0; i--) todo.push(entries[i]![1], Symbol(`${JSON.stringify(entries[i]![0])}:`), ...(i > 0 ? [Symbol(',')] : []));
    } else out.push(JSON.stringify(v ?? null));
  }
  return out.join('');
}

/** 'ok', or 4 for a verification failure; anything else fails the test, naming the mutant. */
async function outcome(what: string, step: string, run: () => Promise<unknown>): Promise<'ok' | 4> {
  try {
    await run();
    return 'ok';
  } catch (err) {
    const e = toAirlockError(err);
    if (e.exitCode !== 4 || e.code === 'AIRLOCK_INTERNAL') throw new Error(`${what}: ${step} exited ${e.exitCode} ${e.code}: ${e.message}`, { cause: err });
    return 4;
  }
}

async function throughEverything(what: string, p: string): Promise<{ verify: 'ok' | 4; import: 'ok' | 4 }> {
  await outcome(what, 'inspect', () => readPackage(p));
  const verify = await outcome(what, 'verify', () => verifyPackage(p, { trust }));
  const before = await treeDigest(store);
  let status: string | undefined;
  const imported = await outcome(what, 'import', async () => {
    status = (await importPackage(p, { store, trust })).status;
  });
  if (imported === 4 || status === 'unchanged') expect(await treeDigest(store), `${what}: a refused import changed the store`).toBe(before);
  if (status === 'imported') {
    // A valid new version (a harmless manifest change such as another label): it must have verified too.
    expect(verify, `${what}: import added what verify refused`).toBe('ok');
    await rm(store, { recursive: true, force: true });
    await cp(pristine, store, { recursive: true });
  }
  return { verify, import: imported };
}

describe('package format fuzz (library)', () => {
  it(`${BYTE_MUTANTS} byte mutants of a signed package: exit 4 or harmless, never 1, store unchanged`, async () => {
    const bytes = await readFile(good);
    const tally = { ok: 0, refused: 0 };
    for (const m of mutants(bytes, BYTE_MUTANTS, 0xa1c0)) {
      const p = join(dir, `byte-${m.index}.airlock`);
      await writeFile(p, m.bytes);
      const r = await throughEverything(`byte mutant #${m.index} (${m.mutation} at ${m.at})`, p);
      tally[r.verify === 'ok' ? 'ok' : 'refused']++;
      await rm(p);
    }
    expect(tally.refused).toBeGreaterThan(BYTE_MUTANTS / 2); // the fuzz reached the checks, not only harmless padding
  }, 60_000);

  it(`${JSON_MUTANTS} manifest mutants re-signed with the trusted key: exit 4 or valid, never 1, store unchanged`, async () => {
    const manifest = JSON.parse(members[0]!.data.toString()) as unknown;
    expect(stringifyFlat(manifest)).toBe(JSON.stringify(manifest));
    const tally = { ok: 0, refused: 0 };
    for (const m of jsonMutants(manifest, JSON_MUTANTS, 0x3a71)) {
      const data = Buffer.from(stringifyFlat(m.value));
      const p = join(dir, `json-${m.index}.airlock`);
      await assemble(p, [{ name: 'airlock.json', data }, { name: 'airlock.json.sig', data: sign(null, data, signer.privateKey) }, members[2]!]);
      const r = await throughEverything(`manifest mutant #${m.index} (${m.what})`, p);
      tally[r.verify === 'ok' ? 'ok' : 'refused']++;
      await rm(p);
    }
    expect(tally.refused).toBeGreaterThan(JSON_MUTANTS / 2);
  }, 60_000);
});
